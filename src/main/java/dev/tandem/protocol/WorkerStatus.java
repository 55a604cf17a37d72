package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * What a worker holds right now, for tests and operators: requests being prefilled, sequences in
 * the decode batch, KV parked awaiting its DECODE_REQUEST or still arriving, and KV bytes held.
 */
public record WorkerStatus(String workerId, WorkerRole role, int prefilling, int activeSequences,
                           int parkedKv, int incomingKv, long kvBytes) {

  public static final JsonCodec<WorkerStatus> CODEC = new JsonCodec<>() {
    @Override
    public JsonObject encode(WorkerStatus s) {
      return new JsonObject()
          .put("worker_id", s.workerId)
          .put("role", s.role.wireName())
          .put("prefilling", s.prefilling)
          .put("active_sequences", s.activeSequences)
          .put("parked_kv", s.parkedKv)
          .put("incoming_kv", s.incomingKv)
          .put("kv_bytes", s.kvBytes);
    }

    @Override
    public WorkerStatus decode(JsonObject json) {
      return new WorkerStatus(
          JsonFields.requiredString(json, "worker_id"),
          WorkerRole.fromWire(JsonFields.requiredString(json, "role")),
          JsonFields.requiredInt(json, "prefilling"),
          JsonFields.requiredInt(json, "active_sequences"),
          JsonFields.requiredInt(json, "parked_kv"),
          JsonFields.requiredInt(json, "incoming_kv"),
          JsonFields.requiredLong(json, "kv_bytes"));
    }
  };
}
