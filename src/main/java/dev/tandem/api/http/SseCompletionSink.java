package dev.tandem.api.http;

import dev.tandem.api.ClientSink;
import dev.tandem.api.CompletionCall;
import dev.tandem.api.ErrorBodies;
import dev.tandem.api.ResponseShape;
import dev.tandem.router.GenerationFailure;
import dev.tandem.router.Usage;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * Where tokens are sent to an SSE client: a completion or chat answer as server-sent events, as the
 * OpenAI SDKs parse them — one {@code data:} chunk per token batch, a last chunk with the finish
 * reason, the usage chunk when asked for, then {@code data: [DONE]}. Headers go out with the first
 * token, so a request refused before any token still gets a proper HTTP error status.
 */
final class SseCompletionSink extends ClientSink implements SseFlusher.Pending {
    private final HttpServerResponse response;
    private final CompletionCall call;
    private final SseFlusher flusher;
    private ResponseShape shape;
    private boolean first = true;
    /** Token events not yet written: they go out with the flusher's next write, or before the stream's end. */
    private StringBuilder pending;

    SseCompletionSink(HttpServerResponse response, CompletionCall call, SseFlusher flusher) {
        this.response = response;
        this.call = call;
        this.flusher = flusher;
    }

    @Override
    protected void rateLimits(java.util.Map<String, String> headers) {
        if (!response.headWritten()) {
            headers.forEach(response::putHeader);
        }
    }

    @Override
    protected void accepted(long requestId, String prefillWorker, String decodeWorker) {
        shape = ResponseShape.of(call.kind(), requestId, call.model());
        ResponseHeaders.put(response, requestId, prefillWorker, decodeWorker);
    }

    private void open() {
        if (!response.headWritten()) {
            response.setChunked(true)
                    .putHeader("Content-Type", "text/event-stream; charset=utf-8")
                    .putHeader("Cache-Control", "no-cache")
                    .putHeader("Connection", "keep-alive")
                    // nginx and similar proxies would otherwise hold tokens back in their buffers.
                    .putHeader("X-Accel-Buffering", "no");
        }
    }

    private static String event(JsonObject data) {
        return "data: " + data.encode() + "\n\n";
    }

    /** The events not yet written, taken: the start of a stream's last write. */
    private StringBuilder takePending() {
        StringBuilder out = pending != null ? pending : new StringBuilder();
        pending = null;
        return out;
    }

    @Override
    protected void tokens(int[] ids, String text) {
        if (response.closed()) {
            return; // its close handler abandons the request next
        }
        String event = shape.deltaEvent(text, ids, first);
        first = false;
        if (pending == null) {
            pending = new StringBuilder(event);
            flusher.schedule(this);
        } else {
            pending.append(event);
        }
    }

    @Override
    public void writePending() {
        StringBuilder events = takePending();
        if (!events.isEmpty() && !response.closed()) {
            open();
            response.write(events.toString());
        }
    }

    /**
     * The stream's remaining events, its last chunk, the usage and {@code [DONE]} go out as one write: each
     * write of a connection that is not reading is a syscall (and a wake-up of the client), and a decode
     * step that ends many streams at once made the router's loop pay four of them per stream.
     */
    @Override
    protected void finished(String finishReason, Usage usage) {
        StringBuilder out = takePending();
        if (response.closed()) {
            return;
        }
        open();
        if (first) {
            // Nothing was generated (e.g. the first token was a stop token): chat still opens with the role.
            out.append(event(shape.delta("", new JsonArray(), true)));
        }
        out.append(event(shape.last(finishReason)));
        if (call.includeUsage()) {
            out.append(event(shape.usageChunk(usage)));
        }
        response.end(out.append("data: [DONE]\n\n").toString());
    }

    @Override
    protected void failed(GenerationFailure failure) {
        StringBuilder out = takePending();
        if (response.closed()) {
            return;
        }
        if (!response.headWritten() && out.isEmpty()) {
            ErrorResponses.send(response, failure);
            return;
        }
        // The stream has started: the error travels as an event, then the stream ends — never a silent cut.
        open();
        response.end(out.append(event(ErrorBodies.body(failure)))
                .append("data: [DONE]\n\n")
                .toString());
    }
}
