package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/** KV_CACHE_ACK: the decode worker holds the whole, verified KV of a request. */
public record KvAck(long requestId, long bytesReceived, int tokens) {

    public static final JsonCodec<KvAck> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(KvAck r) {
            return new JsonObject()
                    .put("request_id", r.requestId)
                    .put("bytes", r.bytesReceived)
                    .put("tokens", r.tokens);
        }

        @Override
        public KvAck decode(JsonObject json) {
            return new KvAck(
                    JsonFields.requiredLong(json, "request_id"),
                    JsonFields.requiredLong(json, "bytes"),
                    JsonFields.requiredInt(json, "tokens"));
        }
    };
}
