package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * What a worker's KV caches gained and lost since its previous batch of events, published to every
 * router ({@link Addresses#KV_EVENTS}) so each keeps an index of which worker holds which block. Batches
 * are numbered per worker from 1: a router that sees a gap (or starts late) asks the worker for a
 * {@link KvCacheSnapshot} instead of guessing. {@code stored} and {@code removed} are block hashes
 * ({@link BlockHashes}), applied in that order; {@code timeMillis} is the worker's wall clock when it
 * sent the batch (a router's event lag).
 */
public record KvCacheEvents(String workerId, long seq, long timeMillis, long[] stored, long[] removed) {

    public static final JsonCodec<KvCacheEvents> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(KvCacheEvents e) {
            return new JsonObject()
                    .put("worker_id", e.workerId)
                    .put("seq", e.seq)
                    .put("time", e.timeMillis)
                    .put("stored", JsonFields.longs(e.stored))
                    .put("removed", JsonFields.longs(e.removed));
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
                    JsonFields.requiredLongs(json, "removed"));
        }
    };
}
