package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * Every block a worker's KV caches hold, as of its event batch {@code seq} (0 before the first): the
 * answer to {@link Addresses#kvSnapshot}. A router replaces what it knew of the worker with it, then
 * applies the batches after {@code seq}. {@code lowerBlocks} are those of the cache's lower tier (see
 * {@link KvCacheEvents}), omitted on the wire when empty.
 */
public record KvCacheSnapshot(String workerId, long seq, long[] blocks, long[] lowerBlocks) {

    /** A snapshot of a cache with one tier. */
    public KvCacheSnapshot(String workerId, long seq, long[] blocks) {
        this(workerId, seq, blocks, new long[0]);
    }

    public static final JsonCodec<KvCacheSnapshot> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(KvCacheSnapshot s) {
            JsonObject json = new JsonObject()
                    .put("worker_id", s.workerId)
                    .put("seq", s.seq)
                    .put("blocks", JsonFields.longs(s.blocks));
            return s.lowerBlocks.length > 0 ? json.put("lower_blocks", JsonFields.longs(s.lowerBlocks)) : json;
        }

        @Override
        public KvCacheSnapshot decode(JsonObject json) {
            long seq = JsonFields.requiredLong(json, "seq");
            if (seq < 0) {
                throw new ProtocolException("field 'seq' must not be negative");
            }
            return new KvCacheSnapshot(
                    JsonFields.requiredString(json, "worker_id"),
                    seq,
                    JsonFields.requiredLongs(json, "blocks"),
                    KvCacheEvents.optionalLongs(json, "lower_blocks"));
        }
    };
}
