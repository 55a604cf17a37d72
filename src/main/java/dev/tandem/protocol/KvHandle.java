package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * KV_CACHE for a worker that fronts a GPU server which moves the KV itself (NIXL, Mooncake): instead
 * of KV bytes, the prefill worker hands the decode worker what its upstream needs to fetch them — an
 * opaque JSON object, passed on as it came. vLLM: the {@code kv_transfer_params} of the prefill answer
 * ({@code remote_engine_id}, {@code remote_block_ids}, {@code remote_host}, {@code remote_port}, …);
 * SGLang: {@code bootstrap_host}, {@code bootstrap_port} and {@code bootstrap_room}. The reply is an
 * empty acknowledgement. {@code attempt} scopes it like the KV chunks do; {@code promptTokens} are
 * what the decode worker's upstream request carries.
 */
public record KvHandle(long requestId, int attempt, int[] promptTokens, JsonObject params) {

    public static final JsonCodec<KvHandle> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(KvHandle h) {
            return new JsonObject()
                    .put("request_id", h.requestId)
                    .put("attempt", h.attempt)
                    .put("prompt_tokens", JsonFields.ints(h.promptTokens))
                    .put("params", h.params.copy());
        }

        @Override
        public KvHandle decode(JsonObject json) {
            return new KvHandle(
                    JsonFields.requiredLong(json, "request_id"),
                    JsonFields.optionalInt(json, "attempt", 0),
                    JsonFields.requiredInts(json, "prompt_tokens"),
                    JsonFields.requiredObject(json, "params").copy());
        }
    };
}
