package dev.tandem.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import java.util.concurrent.TimeUnit;

/**
 * A request's spans on its router: {@code tandem.request} (admission to the last byte, a child of the
 * HTTP server's span when there is one) and, under it, {@code tandem.queue} (admission to the first
 * dispatch), {@code tandem.schedule} (choosing the pair), {@code tandem.prefill} (PREFILL_REQUEST to
 * PREFILL_DONE; the worker's spans are its children), {@code tandem.first_token} (admission to the first
 * token written: the TTFT the client saw), {@code tandem.decode} (DECODE_REQUEST to the stream's end)
 * and {@code tandem.stream_end} (the end: affinity recorded, the last bytes written). A request whose
 * trace is not sampled gets {@link #OFF}, whose calls do nothing. Used on the router's loop only.
 */
public final class RequestTrace {
    public static final RequestTrace OFF = new RequestTrace(null, Span.getInvalid(), 0);

    static final AttributeKey<String> PREFILL_WORKER = AttributeKey.stringKey("tandem.prefill_worker");
    static final AttributeKey<String> DECODE_WORKER = AttributeKey.stringKey("tandem.decode_worker");
    static final AttributeKey<Long> REQUEST_ID = AttributeKey.longKey("tandem.request_id");

    private final Tracer tracer;
    private final Span request;
    private final long startEpochNanos;
    private Span queue = Span.getInvalid();
    private Span schedule = Span.getInvalid();
    private Span prefill = Span.getInvalid();
    private Span decode = Span.getInvalid();
    private Span streamEnd = Span.getInvalid();

    private RequestTrace(Tracer tracer, Span request, long startEpochNanos) {
        this.tracer = tracer;
        this.request = request;
        this.startEpochNanos = startEpochNanos;
    }

    /** The request's trace under {@code parent} (the HTTP server's span, or none), or OFF when not sampled. */
    public static RequestTrace begin(Tracer tracer, Context parent, String model, int promptTokens) {
        long now = epochNanos();
        Span request = tracer.spanBuilder("tandem.request")
                .setParent(parent)
                .setStartTimestamp(now, TimeUnit.NANOSECONDS)
                .setAttribute("gen_ai.request.model", model)
                .setAttribute("gen_ai.usage.input_tokens", (long) promptTokens)
                .startSpan();
        if (!request.isRecording()) {
            return OFF;
        }
        RequestTrace trace = new RequestTrace(tracer, request, now);
        trace.queue = trace.child("tandem.queue", SpanKind.INTERNAL);
        return trace;
    }

    /** The trace id for log lines, or null when the request is not traced. */
    public String traceId() {
        return request.getSpanContext().isValid() ? request.getSpanContext().getTraceId() : null;
    }

    /** The request got its cluster-wide id. */
    public void identified(long requestId) {
        request.setAttribute(REQUEST_ID, requestId);
    }

    /** A dispatch begins: the wait in the queue (if any) is over, the pair is being chosen. */
    public void scheduling(int attempt) {
        queue.end();
        schedule = child("tandem.schedule", SpanKind.INTERNAL).setAttribute("tandem.attempt", (long) attempt);
    }

    /** The pair is chosen and PREFILL_REQUEST goes out: the returned span is its parent on the worker. */
    public Span prefilling(String prefillWorker, String decodeWorker, boolean local, long cachedTokens) {
        schedule.setAttribute(PREFILL_WORKER, prefillWorker)
                .setAttribute(DECODE_WORKER, decodeWorker)
                .setAttribute("tandem.local_prefill", local)
                .setAttribute("tandem.cached_tokens_expected", cachedTokens)
                .end();
        prefill = child("tandem.prefill", SpanKind.CLIENT).setAttribute(PREFILL_WORKER, prefillWorker);
        return prefill;
    }

    /** PREFILL_DONE: the KV is on the decode worker. */
    public void prefilled(long cachedTokens, long kvBytes) {
        prefill.setAttribute("tandem.cached_tokens", cachedTokens)
                .setAttribute("tandem.kv_bytes", kvBytes)
                .end();
    }

    /** The first token reached the client: a span from admission to now, the TTFT it saw. */
    public void firstToken() {
        child("tandem.first_token", SpanKind.INTERNAL)
                .setAttribute("tandem.ttft_ms", (epochNanos() - startEpochNanos) / 1_000_000)
                .end();
    }

    /** DECODE_REQUEST goes out: the returned span lasts until the stream ends or moves. */
    public Span decoding(String decodeWorker) {
        decode = child("tandem.decode", SpanKind.CLIENT).setAttribute(DECODE_WORKER, decodeWorker);
        return decode;
    }

    /** The current workers are given up (failed, stalled, left): their spans end in error. */
    public void moving(String why) {
        failed(prefill, why);
        failed(decode, why);
        request.addEvent("tandem.moved");
    }

    /** The request's single end begins. */
    public void ending(String outcome, long generatedTokens) {
        queue.end();
        schedule.end();
        decode.setAttribute("gen_ai.usage.output_tokens", generatedTokens).end();
        prefill.end();
        request.setAttribute("tandem.outcome", outcome).setAttribute("gen_ai.usage.output_tokens", generatedTokens);
        streamEnd = child("tandem.stream_end", SpanKind.INTERNAL);
    }

    /** The response is finished (or failed): the last spans end. {@code error} null when it succeeded. */
    public void ended(String error) {
        streamEnd.end();
        if (error != null) {
            request.setStatus(StatusCode.ERROR, error);
        }
        request.end();
    }

    private Span child(String name, SpanKind kind) {
        if (tracer == null) {
            return Span.getInvalid();
        }
        return tracer.spanBuilder(name)
                .setParent(Context.root().with(request))
                .setSpanKind(kind)
                .startSpan();
    }

    private static void failed(Span span, String why) {
        span.setStatus(StatusCode.ERROR, why);
        span.end();
    }

    private static long epochNanos() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }
}
