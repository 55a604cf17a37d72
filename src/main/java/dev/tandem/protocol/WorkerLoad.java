package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * What a worker holds and how busy it is, reported on every heartbeat and in its status answer: prompt
 * tokens waiting for or in prefill, sequences in (or waiting for) the decode batch, KV memory used and
 * available, how many decode steps it has completed (so routers can tell a busy worker from a stuck
 * one), and the requests behind those numbers — prompts being prefilled, KV transfers parked awaiting
 * their DECODE_REQUEST and still arriving — and how fast it prefills: prompt tokens computed per second of
 * prefill compute, an average of its own recent prompts (its engine's expectation until it has computed
 * one; 0 when it does not say), what routers turn queued tokens into predicted time with — and, for a
 * worker that ships KV, how fast its transfers went (KV bytes per second from sending to the decode
 * worker's ack, in the engine's own bytes; 0 when unknown), what routers price a transfer with.
 */
public record WorkerLoad(
        int queuedPrefillTokens,
        int activeSequences,
        long kvBytesUsed,
        long kvBytesCapacity,
        long decodeSteps,
        int prefilling,
        int parkedKv,
        int incomingKv,
        double prefillTokensPerSecond,
        double kvBytesPerSecond) {

    public WorkerLoad(
            int queuedPrefillTokens,
            int activeSequences,
            long kvBytesUsed,
            long kvBytesCapacity,
            long decodeSteps,
            int prefilling,
            int parkedKv,
            int incomingKv) {
        this(
                queuedPrefillTokens,
                activeSequences,
                kvBytesUsed,
                kvBytesCapacity,
                decodeSteps,
                prefilling,
                parkedKv,
                incomingKv,
                0,
                0);
    }

    /** This load with the worker's measured prefill rate. */
    public WorkerLoad withPrefillRate(double tokensPerSecond) {
        return withRates(tokensPerSecond, kvBytesPerSecond);
    }

    /** This load with the worker's measured KV transfer rate. */
    public WorkerLoad withKvTransferRate(double bytesPerSecond) {
        return withRates(prefillTokensPerSecond, bytesPerSecond);
    }

    private WorkerLoad withRates(double tokensPerSecond, double bytesPerSecond) {
        return new WorkerLoad(
                queuedPrefillTokens,
                activeSequences,
                kvBytesUsed,
                kvBytesCapacity,
                decodeSteps,
                prefilling,
                parkedKv,
                incomingKv,
                tokensPerSecond,
                bytesPerSecond);
    }

    public static final WorkerLoad IDLE = new WorkerLoad(0, 0, 0, 0);

    public WorkerLoad(int queuedPrefillTokens, int activeSequences, long kvBytesUsed, long kvBytesCapacity) {
        this(queuedPrefillTokens, activeSequences, kvBytesUsed, kvBytesCapacity, 0);
    }

    public WorkerLoad(
            int queuedPrefillTokens, int activeSequences, long kvBytesUsed, long kvBytesCapacity, long decodeSteps) {
        this(queuedPrefillTokens, activeSequences, kvBytesUsed, kvBytesCapacity, decodeSteps, 0, 0, 0);
    }

    /** A prefill worker's load: prompt tokens accepted and not yet shipped, and the prompts they make up. */
    public static WorkerLoad prefill(int queuedPrefillTokens, int prefilling) {
        return IDLE.withLocalPrefill(queuedPrefillTokens, prefilling);
    }

    /** A decode worker's batch and KV memory; local prefill and KV in flight are added with the {@code with} methods. */
    public static WorkerLoad decode(int activeSequences, long kvBytesUsed, long kvBytesCapacity, long decodeSteps) {
        return new WorkerLoad(0, activeSequences, kvBytesUsed, kvBytesCapacity, decodeSteps, 0, 0, 0);
    }

    /** This load with prompt tokens waiting for or in prefill on this worker (none before), and their prompts. */
    public WorkerLoad withLocalPrefill(int queuedPrefillTokens, int prefilling) {
        return plus(new WorkerLoad(queuedPrefillTokens, 0, 0, 0, 0, prefilling, 0, 0));
    }

    /** This load with KV transfers (none before) parked awaiting their DECODE_REQUEST and still arriving. */
    public WorkerLoad withKvInFlight(int parkedKv, int incomingKv) {
        return plus(new WorkerLoad(0, 0, 0, 0, 0, 0, parkedKv, incomingKv));
    }

    private WorkerLoad plus(WorkerLoad o) {
        return new WorkerLoad(
                queuedPrefillTokens + o.queuedPrefillTokens,
                activeSequences + o.activeSequences,
                kvBytesUsed + o.kvBytesUsed,
                kvBytesCapacity + o.kvBytesCapacity,
                decodeSteps + o.decodeSteps,
                prefilling + o.prefilling,
                parkedKv + o.parkedKv,
                incomingKv + o.incomingKv,
                Math.max(prefillTokensPerSecond, o.prefillTokensPerSecond),
                Math.max(kvBytesPerSecond, o.kvBytesPerSecond));
    }

    /** True when the worker holds no request and no KV: nothing left behind by what it served. */
    public boolean holdsNothing() {
        return queuedPrefillTokens == 0
                && activeSequences == 0
                && kvBytesUsed == 0
                && prefilling == 0
                && parkedKv == 0
                && incomingKv == 0;
    }

    public static final JsonCodec<WorkerLoad> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(WorkerLoad l) {
            return new JsonObject()
                    .put("queued_prefill_tokens", l.queuedPrefillTokens)
                    .put("active_sequences", l.activeSequences)
                    .put("kv_bytes_used", l.kvBytesUsed)
                    .put("kv_bytes_capacity", l.kvBytesCapacity)
                    .put("decode_steps", l.decodeSteps)
                    .put("prefilling", l.prefilling)
                    .put("parked_kv", l.parkedKv)
                    .put("incoming_kv", l.incomingKv)
                    .put("prefill_tokens_per_second", l.prefillTokensPerSecond)
                    .put("kv_bytes_per_second", l.kvBytesPerSecond);
        }

        @Override
        public WorkerLoad decode(JsonObject json) {
            return new WorkerLoad(
                    JsonFields.requiredInt(json, "queued_prefill_tokens"),
                    JsonFields.requiredInt(json, "active_sequences"),
                    JsonFields.requiredLong(json, "kv_bytes_used"),
                    JsonFields.requiredLong(json, "kv_bytes_capacity"),
                    // Optional: workers in other languages may not count steps or detail their holdings.
                    json.getValue("decode_steps") instanceof Number n ? n.longValue() : 0,
                    JsonFields.optionalInt(json, "prefilling", 0),
                    JsonFields.optionalInt(json, "parked_kv", 0),
                    JsonFields.optionalInt(json, "incoming_kv", 0),
                    positive(json, "prefill_tokens_per_second"),
                    positive(json, "kv_bytes_per_second"));
        }

        /** An optional rate: absent, mistyped, negative or not finite is unknown (0). */
        private static double positive(JsonObject json, String key) {
            return json.getValue(key) instanceof Number r && r.doubleValue() > 0 && Double.isFinite(r.doubleValue())
                    ? r.doubleValue()
                    : 0;
        }
    };
}
