package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/** Router → worker: stop working on a request and free what it holds. */
public record CancelRequest(long requestId, String reason) {

  public static final JsonCodec<CancelRequest> CODEC = new JsonCodec<>() {
    @Override
    public JsonObject encode(CancelRequest r) {
      return new JsonObject().put("request_id", r.requestId).put("reason", r.reason);
    }

    @Override
    public CancelRequest decode(JsonObject json) {
      return new CancelRequest(JsonFields.requiredLong(json, "request_id"), JsonFields.requiredString(json, "reason"));
    }
  };
}
