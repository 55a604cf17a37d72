package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * A worker's KV cache as its registry entry announces it: the block size its blocks are hashed with
 * ({@link BlockHashes}), and — for a decode worker — whether it prefills a prompt's uncached rest itself
 * (PREFILL_REQUEST at its own prefill address). A worker that announces none holds nothing reusable.
 *
 * @param blockBytes the bytes one KV block of this worker's model takes (0: not announced), so that a
 *                   router can count the KV a worker reports in use ({@link WorkerLoad#kvBytesUsed()}) in
 *                   blocks, as the {@code kv-block-cost} scorer does
 */
public record CacheSpec(int blockSize, boolean localPrefill, long blockBytes) {

    public CacheSpec {
        if (blockSize <= 0) {
            throw new ProtocolException("a KV cache's block size must be positive, got " + blockSize);
        }
        if (blockBytes < 0) {
            throw new ProtocolException("a KV block's bytes must not be negative, got " + blockBytes);
        }
    }

    /** A cache that does not announce its blocks' size in bytes. */
    public CacheSpec(int blockSize, boolean localPrefill) {
        this(blockSize, localPrefill, 0);
    }

    public static final JsonCodec<CacheSpec> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(CacheSpec c) {
            JsonObject json = new JsonObject().put("block_size", c.blockSize).put("local_prefill", c.localPrefill);
            return c.blockBytes > 0 ? json.put("block_bytes", c.blockBytes) : json;
        }

        @Override
        public CacheSpec decode(JsonObject json) {
            return new CacheSpec(
                    JsonFields.requiredInt(json, "block_size"),
                    JsonFields.optionalBoolean(json, "local_prefill", false),
                    // Optional: workers in other languages may not know their KV's size in bytes.
                    json.getValue("block_bytes") == null ? 0 : JsonFields.requiredLong(json, "block_bytes"));
        }
    };
}
