package dev.tandem.api.http;

import dev.tandem.api.ClientSink;
import dev.tandem.api.CompletionCall;
import dev.tandem.api.ResponseShape;
import dev.tandem.router.GenerationFailure;
import dev.tandem.router.Usage;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;

/** Collects a whole completion and answers it as one JSON object ({@code "stream": false}). */
final class JsonCompletionSink extends ClientSink {
    private final HttpServerResponse response;
    private final CompletionCall call;
    private final StringBuilder text = new StringBuilder();
    private final JsonArray tokenIds = new JsonArray();
    private ResponseShape shape;

    JsonCompletionSink(HttpServerResponse response, CompletionCall call) {
        this.response = response;
        this.call = call;
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

    @Override
    protected void tokens(int[] ids, String fragment) {
        for (int id : ids) {
            tokenIds.add(id);
        }
        text.append(fragment);
    }

    @Override
    protected void finished(String finishReason, Usage usage) {
        if (response.closed()) {
            return;
        }
        response.putHeader("Content-Type", "application/json")
                .end(shape.whole(text.toString(), tokenIds, finishReason, usage).encode());
    }

    @Override
    protected void failed(GenerationFailure failure) {
        ErrorResponses.send(response, failure);
    }
}
