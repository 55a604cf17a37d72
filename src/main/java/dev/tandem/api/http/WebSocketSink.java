package dev.tandem.api.http;

import dev.tandem.router.DisaggRouter;
import dev.tandem.router.GenerationFailure;
import dev.tandem.router.TokenSink;
import dev.tandem.router.Usage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Arrays;
import dev.tandem.api.ApiException;

/**
 * One request on a {@code /v1/stream} socket: turns its tokens into frames tagged with the client's
 * id. While the socket's write queue is full, token batches are merged into one pending frame
 * instead of queueing a frame each; the frame goes out when the queue drains or before the last one.
 */
final class WebSocketSink implements TokenSink {
  private final WebSocketSession session;
  private final Object id;
  private final String key;
  private int promptTokens;
  private DisaggRouter.Handle handle;
  private boolean ended;
  private int sentTokens;
  private int[] heldIds = new int[0];
  private int heldCount;
  private final StringBuilder heldText = new StringBuilder();

  WebSocketSink(WebSocketSession session, Object id, String key) {
    this.session = session;
    this.id = id;
    this.key = key;
  }

  String key() {
    return key;
  }

  void attach(DisaggRouter.Handle handle, int promptTokens) {
    this.handle = handle;
    this.promptTokens = promptTokens;
  }

  boolean ended() {
    return ended;
  }

  /** The request was refused before it reached the router (invalid fields). */
  void refuse(ApiException e) {
    if (end()) {
      session.sendError(id, e);
    }
  }

  @Override
  public void onAccepted(long requestId, String prefillWorker, String decodeWorker) {
    if (!ended) {
      session.send(frame("accepted").put("request_id", Long.toString(requestId))
          .put("prefill_worker", prefillWorker).put("decode_worker", decodeWorker));
    }
  }

  @Override
  public void onTokens(int[] tokenIds, String text) {
    if (ended || (tokenIds.length == 0 && text.isEmpty())) {
      return;
    }
    sentTokens += tokenIds.length;
    if (heldCount == 0 && heldText.length() == 0 && !session.writeQueueFull()) {
      session.send(tokens(tokenIds, tokenIds.length, text));
      return;
    }
    if (heldCount + tokenIds.length > heldIds.length) {
      heldIds = Arrays.copyOf(heldIds, Math.max(16, 2 * (heldCount + tokenIds.length)));
    }
    System.arraycopy(tokenIds, 0, heldIds, heldCount, tokenIds.length);
    heldCount += tokenIds.length;
    heldText.append(text);
    session.hold(this);
  }

  /** Sends the tokens held back while the socket was full, as one frame. */
  void flushHeld() {
    if (heldCount == 0 && heldText.length() == 0) {
      return;
    }
    session.send(tokens(heldIds, heldCount, heldText.toString()));
    heldIds = new int[0];
    heldCount = 0;
    heldText.setLength(0);
  }

  @Override
  public void onFinish(String finishReason, Usage usage) {
    if (end()) {
      session.send(done(finishReason, usage.promptTokens(), usage.completionTokens()));
    }
  }

  @Override
  public void onError(GenerationFailure failure) {
    if (end()) {
      session.sendError(id, failure.status(), ErrorResponses.body(failure));
    }
  }

  /** The client cancelled: its last frame is "done" with what it was sent, and the workers stop. */
  void cancel() {
    if (end()) {
      session.send(done("cancelled", promptTokens, sentTokens));
      if (handle != null) {
        handle.cancel();
      }
    }
  }

  /** The socket closed: nobody to tell, only the workers to stop. */
  void abandon() {
    if (!ended) {
      ended = true;
      heldText.setLength(0);
      heldCount = 0;
      if (handle != null) {
        handle.cancel();
      }
    }
  }

  /** Marks the end, sends what is held, and releases the session's entry; false if already ended. */
  private boolean end() {
    if (ended) {
      return false;
    }
    ended = true;
    flushHeld();
    session.release(this);
    return true;
  }

  private JsonObject frame(String type) {
    return new JsonObject().put("id", id).put("type", type);
  }

  private JsonObject tokens(int[] ids, int count, String text) {
    JsonArray array = new JsonArray();
    for (int i = 0; i < count; i++) {
      array.add(ids[i]);
    }
    return frame("tokens").put("text", text).put("token_ids", array);
  }

  private JsonObject done(String finishReason, int prompt, int completion) {
    return frame("done").put("finish_reason", finishReason).put("usage", new Usage(prompt, completion).toJson());
  }
}
