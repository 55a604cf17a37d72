package dev.tandem.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;

/**
 * A worker's spans for one request: children of the context its message carried. When that context is
 * not sampled — every request while tracing is off — the span is the invalid one, which costs nothing.
 */
public final class Spans {
    private Spans() {}

    public static Span start(Tracer tracer, String name, Context parent, SpanKind kind) {
        if (!Span.fromContext(parent).getSpanContext().isSampled()) {
            return Span.getInvalid();
        }
        return tracer.spanBuilder(name).setParent(parent).setSpanKind(kind).startSpan();
    }

    public static Span start(Tracer tracer, String name, Context parent) {
        return start(tracer, name, parent, SpanKind.INTERNAL);
    }
}
