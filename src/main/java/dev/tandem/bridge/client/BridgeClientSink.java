package dev.tandem.bridge.client;

import dev.tandem.api.ApiException;
import dev.tandem.api.http.ErrorResponses;
import dev.tandem.router.DisaggRouter;
import dev.tandem.router.GenerationFailure;
import dev.tandem.router.TokenSink;
import dev.tandem.router.Usage;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * One bridge client's request: answers its generate message with the request id once the router has
 * accepted it (or fails that reply when it is refused first), then pushes {@code {id, text, token_ids}}
 * to the client's {@code stream_to} address per token batch and ends with {@code {id, finish_reason,
 * usage}} or {@code {id, error}}. Runs on the router's event loop.
 */
final class BridgeClientSink implements TokenSink {
  /** Pushes never leave this node: the client is connected here, and no cluster lookup is needed per token. */
  private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);

  private final ClientRequests requests;
  private final EventBus eventBus;
  private final String streamTo;
  private final String connection;
  /** The generate message, until it is answered. */
  private Message<Object> request;
  private String id;
  private int promptTokens;
  private int sentTokens;
  private DisaggRouter.Handle handle;
  private boolean ended;

  BridgeClientSink(ClientRequests requests, EventBus eventBus, Message<Object> request, String streamTo, String connection) {
    this.requests = requests;
    this.eventBus = eventBus;
    this.request = request;
    this.streamTo = streamTo;
    this.connection = connection;
  }

  String id() {
    return id;
  }

  String streamTo() {
    return streamTo;
  }

  /** The bridge connection that started it, or null when it came from elsewhere on this node. */
  String connection() {
    return connection;
  }

  boolean ended() {
    return ended;
  }

  void promptTokens(int count) {
    promptTokens = count;
  }

  void attach(DisaggRouter.Handle handle) {
    this.handle = handle;
  }

  /** The request was refused before it reached the router (invalid fields). */
  void refuse(ApiException e) {
    if (end()) {
      failBeforeStart(e.status(), ErrorResponses.body(e));
    }
  }

  @Override
  public void onAccepted(long requestId, String prefillWorker, String decodeWorker) {
    if (ended) {
      return;
    }
    // A string: flake ids outgrow the integers JavaScript clients can hold.
    id = Long.toString(requestId);
    requests.accepted(this);
    if (request != null) {
      request.reply(new JsonObject().put("id", id).put("prefill_worker", prefillWorker)
          .put("decode_worker", decodeWorker));
      request = null;
    }
  }

  @Override
  public void onTokens(int[] tokenIds, String text) {
    if (ended || (tokenIds.length == 0 && text.isEmpty())) {
      return;
    }
    sentTokens += tokenIds.length;
    JsonArray ids = new JsonArray();
    for (int t : tokenIds) {
      ids.add(t);
    }
    push(new JsonObject().put("id", id).put("text", text).put("token_ids", ids));
  }

  @Override
  public void onFinish(String finishReason, Usage usage) {
    if (end()) {
      push(done(finishReason, usage));
    }
  }

  @Override
  public void onError(GenerationFailure failure) {
    if (!end()) {
      return;
    }
    if (id == null) {
      failBeforeStart(failure.status(), ErrorResponses.body(failure));
    } else {
      push(error(failure.status(), ErrorResponses.body(failure)));
    }
  }

  /** The client cancelled: its last frame says so with what it was sent, and the workers stop. */
  void cancel() {
    if (end()) {
      push(done("cancelled", new Usage(promptTokens, sentTokens)));
      if (handle != null) {
        handle.cancel();
      }
    }
  }

  /**
   * Nobody reads its tokens any more (the connection closed, or gave up the stream_to address): no
   * frames, only the workers to stop, and a reply still owed is failed with {@code why}.
   */
  void abandon(String why) {
    if (end()) {
      if (request != null && request.replyAddress() != null) {
        request.fail(400, why);
      }
      request = null;
      if (handle != null) {
        handle.cancel();
      }
    }
  }

  /** Marks the end and releases the request's entries; false if it had already ended. */
  private boolean end() {
    if (ended) {
      return false;
    }
    ended = true;
    requests.release(this);
    return true;
  }

  /**
   * Refused before it had an id: the failed reply carries the status and message (Vert.x replies have
   * no room for more). A client that sent without a reply address gets an error frame with a null id.
   */
  private void failBeforeStart(int status, JsonObject errorBody) {
    if (request != null && request.replyAddress() != null) {
      request.fail(status, errorBody.getJsonObject("error").getString("message"));
    } else {
      push(error(status, errorBody));
    }
    request = null;
  }

  private void push(JsonObject frame) {
    eventBus.send(streamTo, frame, LOCAL);
  }

  private JsonObject done(String finishReason, Usage usage) {
    return new JsonObject().put("id", id).put("finish_reason", finishReason).put("usage", usage.toJson());
  }

  private JsonObject error(int status, JsonObject errorBody) {
    return new JsonObject().put("id", id).put("error", errorBody.getJsonObject("error")).put("status", status);
  }
}
