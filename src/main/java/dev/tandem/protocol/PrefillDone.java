package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * PREFILL_DONE: the KV is on the decode worker (acknowledged) and here is the first generated token.
 * {@code kvBytes} is what was shipped; {@code cachedTokens} the prompt tokens whose KV was reused instead
 * of computed: the prefix-cache hit of the worker that prefilled (blocks the decode worker already holds
 * are not shipped again, but a remote prefill still computes them unless its own cache has them).
 */
public record PrefillDone(
        long requestId, int firstToken, int promptTokens, long kvBytes, long prefillMicros, int cachedTokens) {

    /**
     * {@code firstToken} when the prefill produced none to send: a GPU server behind the decode worker
     * generates the first token itself (the decode stream carries tokens from 0).
     */
    public static final int NO_FIRST_TOKEN = -1;

    public PrefillDone(long requestId, int firstToken, int promptTokens, long kvBytes, long prefillMicros) {
        this(requestId, firstToken, promptTokens, kvBytes, prefillMicros, 0);
    }

    public static final JsonCodec<PrefillDone> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(PrefillDone r) {
            return new JsonObject()
                    .put("request_id", r.requestId)
                    .put("first_token", r.firstToken)
                    .put("prompt_tokens", r.promptTokens)
                    .put("kv_bytes", r.kvBytes)
                    .put("prefill_us", r.prefillMicros)
                    .put("cached_tokens", r.cachedTokens);
        }

        @Override
        public PrefillDone decode(JsonObject json) {
            return new PrefillDone(
                    JsonFields.requiredLong(json, "request_id"),
                    JsonFields.requiredInt(json, "first_token"),
                    JsonFields.requiredInt(json, "prompt_tokens"),
                    JsonFields.requiredLong(json, "kv_bytes"),
                    JsonFields.requiredLong(json, "prefill_us"),
                    JsonFields.optionalInt(json, "cached_tokens", 0));
        }
    };
}
