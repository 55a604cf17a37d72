package dev.tandem.api;

import dev.tandem.router.GenerationFailure;
import dev.tandem.router.TokenSink;
import dev.tandem.router.Usage;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * Streams a completion as server-sent events: one {@code data:} chunk per token batch, a last chunk
 * with the finish reason, then {@code data: [DONE]}. Headers go out with the first token, so a
 * request refused before any token still gets a proper HTTP error status.
 */
final class SseCompletionSink implements TokenSink {
  private final HttpServerResponse response;
  private final String model;
  private CompletionChunks chunks;

  SseCompletionSink(HttpServerResponse response, String model) {
    this.response = response;
    this.model = model;
  }

  @Override
  public void onAccepted(long requestId, String prefillWorker, String decodeWorker) {
    chunks = new CompletionChunks(requestId, model);
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
    event(chunks.chunk(text, CompletionChunks.ids(ids), null));
  }

  @Override
  public void onFinish(String finishReason, Usage usage) {
    if (response.closed()) {
      return;
    }
    open();
    event(chunks.chunk("", new JsonArray(), finishReason).put("usage", CompletionChunks.usage(usage)));
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
