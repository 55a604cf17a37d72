package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * Router → worker: stop working on a request and free what it holds. {@code attempt} scopes it to one
 * dispatch of the request ({@link #ANY_ATTEMPT}: all): a late cancel of an attempt the router moved
 * away from must not hit the next attempt on the same worker.
 */
public record CancelRequest(long requestId, String reason, int attempt) {
    public static final int ANY_ATTEMPT = -1;

    public CancelRequest(long requestId, String reason) {
        this(requestId, reason, ANY_ATTEMPT);
    }

    /** Does this cancel reach what attempt {@code held} of the request holds? */
    public boolean covers(int held) {
        return attempt == ANY_ATTEMPT || attempt == held;
    }

    public static final JsonCodec<CancelRequest> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(CancelRequest r) {
            JsonObject json = new JsonObject().put("request_id", r.requestId).put("reason", r.reason);
            return r.attempt == ANY_ATTEMPT ? json : json.put("attempt", r.attempt);
        }

        @Override
        public CancelRequest decode(JsonObject json) {
            return new CancelRequest(
                    JsonFields.requiredLong(json, "request_id"),
                    JsonFields.requiredString(json, "reason"),
                    JsonFields.optionalInt(json, "attempt", ANY_ATTEMPT));
        }
    };
}
