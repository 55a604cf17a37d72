package dev.tandem.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.vertx.core.MultiMap;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.tracing.TracingPolicy;
import java.util.function.BiConsumer;

/**
 * The W3C trace context ({@code traceparent}) on what crosses a process: event-bus messages between
 * router and workers, HTTP requests to GPU servers. Tandem sends with Vert.x's own tracing off
 * ({@link TracingPolicy#IGNORE}) and injects the context itself, so exactly the messages of a request's
 * path carry it — not the token batches, heartbeats and load reports that would each make a span.
 */
public final class TraceHeaders {
    public static final String TRACEPARENT = "traceparent";
    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

    private static final TextMapGetter<MultiMap> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(MultiMap carrier) {
            return carrier.names();
        }

        @Override
        public String get(MultiMap carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private TraceHeaders() {}

    /** Options for a message that carries no trace (and makes Vert.x make none). */
    public static DeliveryOptions untraced(DeliveryOptions base) {
        return base.setTracingPolicy(TracingPolicy.IGNORE);
    }

    /**
     * {@code base} when the span is not sampled (nothing to carry: the common, cheap case), else a copy
     * with the span's {@code traceparent}.
     */
    public static DeliveryOptions carrying(Span span, DeliveryOptions base) {
        if (!span.getSpanContext().isSampled()) {
            return base;
        }
        // The bases carry no headers of their own, so the copy shares none with them.
        DeliveryOptions copy = new DeliveryOptions(base).setTracingPolicy(TracingPolicy.IGNORE);
        inject(span, copy::addHeader);
        return copy;
    }

    /** Writes the span's trace context as headers (nothing when it is not sampled). */
    public static void inject(Span span, BiConsumer<String, String> headers) {
        if (span.getSpanContext().isSampled()) {
            W3C.inject(Context.root().with(span), headers, (h, k, v) -> h.accept(k, v));
        }
    }

    /**
     * The parent of a worker's spans for a message: the span Vert.x opened for it when the message
     * carried a {@code traceparent} (it is current in the consumer), else the one in its headers, else none.
     */
    public static Context parentOf(Message<?> message) {
        Context current = Context.current();
        if (Span.fromContext(current).getSpanContext().isValid()) {
            return current;
        }
        return W3C.extract(Context.root(), message.headers(), HEADERS);
    }
}
