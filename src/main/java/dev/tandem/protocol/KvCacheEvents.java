package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * What a worker's KV caches gained and lost since its previous batch of events, published to every
 * router ({@link Addresses#KV_EVENTS}) so each keeps an index of which worker holds which block. Batches
 * are numbered per worker from 1: a router that sees a gap (or starts late) asks the worker for a
 * {@link KvCacheSnapshot} instead of guessing. {@code stored} and {@code removed} are block hashes
 * ({@link BlockHashes}), applied in that order; {@code timeMillis} is the worker's wall clock when it
 * sent the batch (a router's event lag).
 *
 * <p>{@code storedLower} and {@code removedLower} are the same for a lower tier of the worker's cache
 * (a GPU engine's blocks offloaded to CPU memory or disk): slower to load than the first tier, faster than
 * a prefill, so routers count a hit there at a fraction. On the wire they are omitted when empty.
 */
public record KvCacheEvents(
        String workerId,
        long seq,
        long timeMillis,
        long[] stored,
        long[] removed,
        long[] storedLower,
        long[] removedLower) {

    private static final long[] NONE = new long[0];

    /** A batch of a cache with one tier. */
    public KvCacheEvents(String workerId, long seq, long timeMillis, long[] stored, long[] removed) {
        this(workerId, seq, timeMillis, stored, removed, NONE, NONE);
    }

    public static final JsonCodec<KvCacheEvents> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(KvCacheEvents e) {
            JsonObject json = new JsonObject()
                    .put("worker_id", e.workerId)
                    .put("seq", e.seq)
                    .put("time", e.timeMillis)
                    .put("stored", JsonFields.longs(e.stored))
                    .put("removed", JsonFields.longs(e.removed));
            if (e.storedLower.length > 0) {
                json.put("stored_lower", JsonFields.longs(e.storedLower));
            }
            if (e.removedLower.length > 0) {
                json.put("removed_lower", JsonFields.longs(e.removedLower));
            }
            return json;
        }

        @Override
        public KvCacheEvents decode(JsonObject json) {
            long seq = JsonFields.requiredLong(json, "seq");
            if (seq < 1) {
                throw new ProtocolException("field 'seq' must be at least 1");
            }
            return new KvCacheEvents(
                    JsonFields.requiredString(json, "worker_id"),
                    seq,
                    JsonFields.requiredLong(json, "time"),
                    JsonFields.requiredLongs(json, "stored"),
                    JsonFields.requiredLongs(json, "removed"),
                    optionalLongs(json, "stored_lower"),
                    optionalLongs(json, "removed_lower"));
        }
    };

    /** An array field that older workers (and single-tier caches) leave out. */
    static long[] optionalLongs(JsonObject json, String field) {
        return json.getValue(field) == null ? NONE : JsonFields.requiredLongs(json, field);
    }
}
