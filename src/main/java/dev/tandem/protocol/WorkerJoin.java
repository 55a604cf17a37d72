package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;
import java.util.regex.Pattern;

/**
 * An external worker's first message over the worker bridge: what it serves. {@code workerId} and
 * {@code token} are optional (null): the bridge names the worker, and a token is needed only when the
 * bridge is configured with one.
 */
public record WorkerJoin(
        WorkerRole role, String model, long modelFingerprint, int maxBatch, String workerId, String token) {
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
                    JsonFields.optionalString(json, "token"));
        }
    };
}
