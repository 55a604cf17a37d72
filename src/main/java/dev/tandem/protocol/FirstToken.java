package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * FIRST_TOKEN: the token a prefill worker computed with the prompt's KV, sent to the router the moment it
 * is known, while the KV is still on its way to the decode worker. The router streams it at once; the
 * PREFILL_DONE that follows the KV's acknowledgement carries it again and only starts the decode. Sent
 * only when the PREFILL_REQUEST names a router ({@code router_id}); a worker that does not send it (a
 * bridged one, say) leaves the first token to PREFILL_DONE, as before. {@code attempt} and
 * {@code workerId} let the router drop a token of a dispatch it has since given up.
 */
public record FirstToken(long requestId, int attempt, String workerId, int token) {

    public static final JsonCodec<FirstToken> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(FirstToken t) {
            return new JsonObject()
                    .put("request_id", t.requestId)
                    .put("attempt", t.attempt)
                    .put("worker", t.workerId)
                    .put("token", t.token);
        }

        @Override
        public FirstToken decode(JsonObject json) {
            int token = JsonFields.requiredInt(json, "token");
            if (token < 0) {
                throw new ProtocolException("field 'token' must be a token id, got " + token);
            }
            return new FirstToken(
                    JsonFields.requiredLong(json, "request_id"),
                    JsonFields.requiredInt(json, "attempt"),
                    JsonFields.requiredString(json, "worker"),
                    token);
        }
    };
}
