package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/** PREFILL_DONE: the KV is on the decode worker (acknowledged) and here is the first generated token. */
public record PrefillDone(long requestId, int firstToken, int promptTokens, long kvBytes, long prefillMicros) {

    public static final JsonCodec<PrefillDone> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(PrefillDone r) {
            return new JsonObject()
                    .put("request_id", r.requestId)
                    .put("first_token", r.firstToken)
                    .put("prompt_tokens", r.promptTokens)
                    .put("kv_bytes", r.kvBytes)
                    .put("prefill_us", r.prefillMicros);
        }

        @Override
        public PrefillDone decode(JsonObject json) {
            return new PrefillDone(
                    JsonFields.requiredLong(json, "request_id"),
                    JsonFields.requiredInt(json, "first_token"),
                    JsonFields.requiredInt(json, "prompt_tokens"),
                    JsonFields.requiredLong(json, "kv_bytes"),
                    JsonFields.requiredLong(json, "prefill_us"));
        }
    };
}
