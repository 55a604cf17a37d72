package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * What a worker reports about its load on every heartbeat: prompt tokens waiting for or in prefill,
 * sequences in (or waiting for) the decode batch, KV memory used and available, and how many decode
 * steps it has completed (so routers can tell a busy worker from a stuck one).
 */
public record WorkerLoad(int queuedPrefillTokens, int activeSequences, long kvBytesUsed, long kvBytesCapacity,
                         long decodeSteps) {

  public static final WorkerLoad IDLE = new WorkerLoad(0, 0, 0, 0, 0);

  public WorkerLoad(int queuedPrefillTokens, int activeSequences, long kvBytesUsed, long kvBytesCapacity) {
    this(queuedPrefillTokens, activeSequences, kvBytesUsed, kvBytesCapacity, 0);
  }

  public static final JsonCodec<WorkerLoad> CODEC = new JsonCodec<>() {
    @Override
    public JsonObject encode(WorkerLoad l) {
      return new JsonObject()
          .put("queued_prefill_tokens", l.queuedPrefillTokens)
          .put("active_sequences", l.activeSequences)
          .put("kv_bytes_used", l.kvBytesUsed)
          .put("kv_bytes_capacity", l.kvBytesCapacity)
          .put("decode_steps", l.decodeSteps);
    }

    @Override
    public WorkerLoad decode(JsonObject json) {
      return new WorkerLoad(
          JsonFields.requiredInt(json, "queued_prefill_tokens"),
          JsonFields.requiredInt(json, "active_sequences"),
          JsonFields.requiredLong(json, "kv_bytes_used"),
          JsonFields.requiredLong(json, "kv_bytes_capacity"),
          // Optional: workers in other languages may not count steps.
          json.getValue("decode_steps") instanceof Number n ? n.longValue() : 0);
    }
  };
}
