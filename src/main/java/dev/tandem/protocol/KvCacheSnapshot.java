package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * Every block a worker's KV caches hold, as of its event batch {@code seq} (0 before the first): the
 * answer to {@link Addresses#kvSnapshot}. A router replaces what it knew of the worker with it, then
 * applies the batches after {@code seq}.
 */
public record KvCacheSnapshot(String workerId, long seq, long[] blocks) {

    public static final JsonCodec<KvCacheSnapshot> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(KvCacheSnapshot s) {
            return new JsonObject()
                    .put("worker_id", s.workerId)
                    .put("seq", s.seq)
                    .put("blocks", JsonFields.longs(s.blocks));
        }

        @Override
        public KvCacheSnapshot decode(JsonObject json) {
            long seq = JsonFields.requiredLong(json, "seq");
            if (seq < 0) {
                throw new ProtocolException("field 'seq' must not be negative");
            }
            return new KvCacheSnapshot(
                    JsonFields.requiredString(json, "worker_id"), seq, JsonFields.requiredLongs(json, "blocks"));
        }
    };
}
