package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * DECODE_TOKEN / DECODE_DONE for one request: {@code tokens} are generated tokens
 * {@code seq, seq + 1, …}. A non-null {@code finishReason} ends the request ("stop", "length");
 * a non-null {@code error} ends it with a failure.
 */
public record TokenEvent(long requestId, int seq, int[] tokens, String finishReason, String error) {

    public boolean terminal() {
        return finishReason != null || error != null;
    }

    public static final JsonCodec<TokenEvent> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(TokenEvent e) {
            JsonObject json = new JsonObject()
                    .put("request_id", e.requestId)
                    .put("seq", e.seq)
                    .put("tokens", JsonFields.ints(e.tokens));
            if (e.finishReason != null) {
                json.put("finish_reason", e.finishReason);
            }
            if (e.error != null) {
                json.put("error", e.error);
            }
            return json;
        }

        @Override
        public TokenEvent decode(JsonObject json) {
            int seq = JsonFields.requiredInt(json, "seq");
            if (seq < 0) {
                throw new ProtocolException("field 'seq' must be >= 0");
            }
            return new TokenEvent(
                    JsonFields.requiredLong(json, "request_id"),
                    seq,
                    JsonFields.requiredInts(json, "tokens"),
                    JsonFields.optionalString(json, "finish_reason"),
                    JsonFields.optionalString(json, "error"));
        }
    };
}
