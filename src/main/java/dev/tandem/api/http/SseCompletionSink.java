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
final class SseCompletionSink extends ClientSink {
    private final HttpServerResponse response;
    private final CompletionCall call;
    private ResponseShape shape;
    private boolean first = true;

    SseCompletionSink(HttpServerResponse response, CompletionCall call) {
        this.response = response;
        this.call = call;
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

    private void event(JsonObject data) {
        response.write("data: " + data.encode() + "\n\n");
    }

    @Override
    protected void tokens(int[] ids, String text) {
        if (response.closed()) {
            return; // its close handler abandons the request next
        }
        open();
        response.write(shape.deltaEvent(text, ids, first));
        first = false;
    }

    @Override
    protected void finished(String finishReason, Usage usage) {
        if (response.closed()) {
            return;
        }
        open();
        if (first) {
            // Nothing was generated (e.g. the first token was a stop token): chat still opens with the role.
            event(shape.delta("", new JsonArray(), true));
        }
        event(shape.last(finishReason));
        if (call.includeUsage()) {
            event(shape.usageChunk(usage));
        }
        response.end("data: [DONE]\n\n");
    }

    @Override
    protected void failed(GenerationFailure failure) {
        if (response.closed()) {
            return;
        }
        if (!response.headWritten()) {
            ErrorResponses.send(response, failure);
            return;
        }
        // The stream has started: the error travels as an event, then the stream ends — never a silent cut.
        event(ErrorBodies.body(failure));
        response.end("data: [DONE]\n\n");
    }
}
