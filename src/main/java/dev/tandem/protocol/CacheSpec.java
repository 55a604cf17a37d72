package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * A worker's KV cache as its registry entry announces it: the block size its blocks are hashed with
 * ({@link BlockHashes}), and — for a decode worker — whether it prefills a prompt's uncached rest itself
 * (PREFILL_REQUEST at its own prefill address). A worker that announces none holds nothing reusable.
 */
public record CacheSpec(int blockSize, boolean localPrefill) {

    public CacheSpec {
        if (blockSize <= 0) {
            throw new ProtocolException("a KV cache's block size must be positive, got " + blockSize);
        }
    }

    public static final JsonCodec<CacheSpec> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(CacheSpec c) {
            return new JsonObject().put("block_size", c.blockSize).put("local_prefill", c.localPrefill);
        }

        @Override
        public CacheSpec decode(JsonObject json) {
            return new CacheSpec(
                    JsonFields.requiredInt(json, "block_size"),
                    JsonFields.optionalBoolean(json, "local_prefill", false));
        }
    };
}
