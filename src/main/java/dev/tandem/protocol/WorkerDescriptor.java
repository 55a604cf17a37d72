package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * A worker's entry in the registry map: who it is, what it serves and where. Refreshed on every
 * heartbeat, with its current {@link WorkerLoad}; {@code nodeId} is the cluster member that hosts it,
 * so its entries go when it leaves. {@code card} (may be null) describes the model beyond its name.
 */
public record WorkerDescriptor(
        String workerId,
        WorkerRole role,
        String model,
        long modelFingerprint,
        String nodeId,
        int maxBatch,
        boolean draining,
        WorkerLoad load,
        CacheSpec cache,
        ModelCard card) {

    /** A worker that announces no model card. */
    public WorkerDescriptor(
            String workerId,
            WorkerRole role,
            String model,
            long modelFingerprint,
            String nodeId,
            int maxBatch,
            boolean draining,
            WorkerLoad load,
            CacheSpec cache) {
        this(workerId, role, model, modelFingerprint, nodeId, maxBatch, draining, load, cache, null);
    }

    /** A worker that announces no KV cache. */
    public WorkerDescriptor(
            String workerId,
            WorkerRole role,
            String model,
            long modelFingerprint,
            String nodeId,
            int maxBatch,
            boolean draining,
            WorkerLoad load) {
        this(workerId, role, model, modelFingerprint, nodeId, maxBatch, draining, load, null);
    }

    public static final JsonCodec<WorkerDescriptor> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(WorkerDescriptor d) {
            JsonObject json = new JsonObject()
                    .put("worker_id", d.workerId)
                    .put("role", d.role.wireName())
                    .put("model", d.model)
                    .put("model_fingerprint", d.modelFingerprint)
                    .put("node_id", d.nodeId)
                    .put("max_batch", d.maxBatch)
                    .put("draining", d.draining)
                    .put("load", WorkerLoad.CODEC.encode(d.load));
            if (d.cache != null) {
                json.put("kv_cache", CacheSpec.CODEC.encode(d.cache));
            }
            if (d.card != null) {
                json.put("model_card", ModelCard.CODEC.encode(d.card));
            }
            return json;
        }

        @Override
        public WorkerDescriptor decode(JsonObject json) {
            Object draining = json.getValue("draining");
            if (!(draining instanceof Boolean)) {
                throw new ProtocolException("field 'draining' must be a boolean");
            }
            return new WorkerDescriptor(
                    JsonFields.requiredString(json, "worker_id"),
                    WorkerRole.fromWire(JsonFields.requiredString(json, "role")),
                    JsonFields.requiredString(json, "model"),
                    JsonFields.requiredLong(json, "model_fingerprint"),
                    JsonFields.requiredString(json, "node_id"),
                    JsonFields.requiredInt(json, "max_batch"),
                    (Boolean) draining,
                    // Optional: a worker in another language may leave it out.
                    json.getValue("load") == null
                            ? WorkerLoad.IDLE
                            : WorkerLoad.CODEC.decode(JsonFields.requiredObject(json, "load")),
                    // Optional: a worker without a KV cache announces none.
                    json.getValue("kv_cache") == null
                            ? null
                            : CacheSpec.CODEC.decode(JsonFields.requiredObject(json, "kv_cache")),
                    // Optional: a worker in another language may not describe its model.
                    json.getValue("model_card") == null
                            ? null
                            : ModelCard.CODEC.decode(JsonFields.requiredObject(json, "model_card")));
        }
    };
}
