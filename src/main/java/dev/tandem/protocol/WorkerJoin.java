package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;
import java.util.regex.Pattern;

/**
 * An external worker's first message over the worker bridge: what it serves. {@code workerId} and
 * {@code token} are optional (null): the bridge names the worker, and a token is needed only when the
 * bridge is configured with one. {@code kvBlockSize}: the worker keeps a prefix cache of blocks of that many
 * tokens and sends its cache events over the bridge ({@code kv_cache: {block_size}}); 0 when it keeps none.
 */
public record WorkerJoin(
        WorkerRole role,
        String model,
        long modelFingerprint,
        int maxBatch,
        String workerId,
        String token,
        int kvBlockSize) {
    /** Worker ids become parts of event-bus addresses and metric labels: keep them plain. */
    public static final Pattern WORKER_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    public static final int MAX_BATCH_LIMIT = 4096;

    public WorkerJoin {
        if (maxBatch < 1 || maxBatch > MAX_BATCH_LIMIT) {
            throw new ProtocolException("field 'max_batch' must be 1 to " + MAX_BATCH_LIMIT + ", got " + maxBatch);
        }
        if (workerId != null && !WORKER_ID.matcher(workerId).matches()) {
            throw new ProtocolException("field 'worker_id' must be 1 to 64 of [A-Za-z0-9._-], got '" + workerId + "'");
        }
        if (kvBlockSize < 0 || kvBlockSize > MAX_KV_BLOCK_SIZE) {
            throw new ProtocolException(
                    "field 'kv_cache.block_size' must be 1 to " + MAX_KV_BLOCK_SIZE + ", got " + kvBlockSize);
        }
    }

    /** The largest KV block a worker may announce, in tokens (as {@code worker.kv-block-size}). */
    public static final int MAX_KV_BLOCK_SIZE = 4096;

    /** A worker that keeps no prefix cache. */
    public WorkerJoin(
            WorkerRole role, String model, long modelFingerprint, int maxBatch, String workerId, String token) {
        this(role, model, modelFingerprint, maxBatch, workerId, token, 0);
    }

    private static int kvBlockSize(JsonObject cache) {
        int size = JsonFields.requiredInt(cache, "block_size");
        if (size < 1) {
            throw new ProtocolException(
                    "field 'kv_cache.block_size' must be 1 to " + MAX_KV_BLOCK_SIZE + ", got " + size);
        }
        return size;
    }

    public static final JsonCodec<WorkerJoin> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(WorkerJoin j) {
            JsonObject json = new JsonObject()
                    .put("role", j.role.wireName())
                    .put("model", j.model)
                    .put("model_fingerprint", j.modelFingerprint)
                    .put("max_batch", j.maxBatch);
            if (j.workerId != null) {
                json.put("worker_id", j.workerId);
            }
            if (j.token != null) {
                json.put("token", j.token);
            }
            if (j.kvBlockSize > 0) {
                json.put("kv_cache", new JsonObject().put("block_size", j.kvBlockSize));
            }
            return json;
        }

        @Override
        public WorkerJoin decode(JsonObject json) {
            return new WorkerJoin(
                    WorkerRole.fromWire(JsonFields.requiredString(json, "role")),
                    JsonFields.requiredString(json, "model"),
                    JsonFields.requiredLong(json, "model_fingerprint"),
                    JsonFields.requiredInt(json, "max_batch"),
                    JsonFields.optionalString(json, "worker_id"),
                    JsonFields.optionalString(json, "token"),
                    json.getValue("kv_cache") == null ? 0 : kvBlockSize(JsonFields.requiredObject(json, "kv_cache")));
        }
    };
}
