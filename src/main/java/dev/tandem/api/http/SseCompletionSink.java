package dev.tandem.api.http;

import dev.tandem.router.GenerationFailure;
import dev.tandem.router.TokenSink;
import dev.tandem.router.Usage;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import dev.tandem.api.CompletionCall;
import dev.tandem.api.ResponseShape;

/**
 * Streams a completion or chat answer as server-sent events, as the OpenAI SDKs parse them: one
 * {@code data:} chunk per token batch, a last chunk with the finish reason, the usage chunk when
 * asked for, then {@code data: [DONE]}. Headers go out with the first token, so a request refused
 * before any token still gets a proper HTTP error status.
 */
final class SseCompletionSink implements TokenSink {
  private final HttpServerResponse response;
  private final CompletionCall call;
  private ResponseShape shape;
  private boolean first = true;

  SseCompletionSink(HttpServerResponse response, CompletionCall call) {
    this.response = response;
    this.call = call;
  }

  @Override
  public void onAccepted(long requestId, String prefillWorker, String decodeWorker) {
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
  public void onTokens(int[] ids, String text) {
    if (response.closed()) {
      return;
    }
    open();
    event(shape.delta(text, ResponseShape.ids(ids), first));
    first = false;
  }

  @Override
  public void onFinish(String finishReason, Usage usage) {
    if (response.closed()) {
      return;
    }
    open();
    if (first) {
      // Nothing was generated (e.g. the first token was a stop token): chat still opens with the role.
      event(shape.delta("", new io.vertx.core.json.JsonArray(), true));
    }
    event(shape.last(finishReason));
    if (call.includeUsage()) {
      event(shape.usageChunk(usage));
    }
    response.end("data: [DONE]\n\n");
  }

  @Override
  public void onError(GenerationFailure failure) {
    if (response.closed()) {
      return;
    }
    if (!response.headWritten()) {
      ErrorResponses.send(response, failure);
      return;
    }
    // The stream has started: the error travels as an event, then the stream ends — never a silent cut.
    event(ErrorResponses.body(failure));
    response.end("data: [DONE]\n\n");
  }
}
