package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * KV_CACHE_ACK: the decode worker holds the whole, verified KV of a request — or, when
 * {@code needFromBlock} is not {@link #COMPLETE}, it lacks the leading blocks an incremental transfer
 * counted on (evicted meanwhile) and asks for the KV again from that block on.
 */
public record KvAck(long requestId, long bytesReceived, int tokens, int needFromBlock) {
    public static final int COMPLETE = -1;

    public KvAck(long requestId, long bytesReceived, int tokens) {
        this(requestId, bytesReceived, tokens, COMPLETE);
    }

    public static final JsonCodec<KvAck> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(KvAck r) {
            JsonObject json = new JsonObject()
                    .put("request_id", r.requestId)
                    .put("bytes", r.bytesReceived)
                    .put("tokens", r.tokens);
            return r.needFromBlock == COMPLETE ? json : json.put("need_from_block", r.needFromBlock);
        }

        @Override
        public KvAck decode(JsonObject json) {
            return new KvAck(
                    JsonFields.requiredLong(json, "request_id"),
                    JsonFields.requiredLong(json, "bytes"),
                    JsonFields.requiredInt(json, "tokens"),
                    JsonFields.optionalInt(json, "need_from_block", COMPLETE));
        }
    };
}
