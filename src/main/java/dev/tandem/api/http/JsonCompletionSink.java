package dev.tandem.api.http;

import dev.tandem.router.GenerationFailure;
import dev.tandem.router.TokenSink;
import dev.tandem.router.Usage;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import dev.tandem.api.CompletionCall;
import dev.tandem.api.ResponseShape;

/** Collects a whole completion and answers it as one JSON object ({@code "stream": false}). */
final class JsonCompletionSink implements TokenSink {
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
  public void onAccepted(long requestId, String prefillWorker, String decodeWorker) {
    shape = ResponseShape.of(call.kind(), requestId, call.model());
    ResponseHeaders.put(response, requestId, prefillWorker, decodeWorker);
  }

  @Override
  public void onTokens(int[] ids, String fragment) {
    for (int id : ids) {
      tokenIds.add(id);
    }
    text.append(fragment);
  }

  @Override
  public void onFinish(String finishReason, Usage usage) {
    if (response.closed()) {
      return;
    }
    response.putHeader("Content-Type", "application/json")
        .end(shape.whole(text.toString(), tokenIds, finishReason, usage).encode());
  }

  @Override
  public void onError(GenerationFailure failure) {
    ErrorResponses.send(response, failure);
  }
}
