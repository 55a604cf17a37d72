package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * A registered worker as the routers see it: its registry entry — who it is and the load it reports
 * (queued prefill tokens, sequences, KV bytes used and available) — plus {@code inFlight}, the requests
 * every router replica has dispatched to it and not yet seen end. The one load model: what scheduling
 * plugins score and what the web console shows. A snapshot, never a live object.
 */
public record WorkerView(WorkerDescriptor worker, int inFlight, long inFlightPrefillTokens) {

    /** Nothing known of the prompt tokens in flight. */
    public WorkerView(WorkerDescriptor worker, int inFlight) {
        this(worker, inFlight, 0);
    }

    public String id() {
        return worker.workerId();
    }

    public WorkerRole role() {
        return worker.role();
    }

    public String model() {
        return worker.model();
    }

    public long modelFingerprint() {
        return worker.modelFingerprint();
    }

    public boolean draining() {
        return worker.draining();
    }

    public WorkerLoad load() {
        return worker.load();
    }

    /**
     * Flat, as browsers read it (the console): the registry entry's fields with its load's beside them,
     * and {@code in_flight}.
     */
    public static final JsonCodec<WorkerView> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(WorkerView v) {
            JsonObject json = WorkerDescriptor.CODEC.encode(v.worker);
            JsonObject load = (JsonObject) json.remove("load");
            return json.mergeIn(load)
                    .put("in_flight", v.inFlight)
                    .put("in_flight_prefill_tokens", v.inFlightPrefillTokens);
        }

        @Override
        public WorkerView decode(JsonObject json) {
            JsonObject descriptor = json.copy().put("load", WorkerLoad.CODEC.encode(WorkerLoad.CODEC.decode(json)));
            return new WorkerView(
                    WorkerDescriptor.CODEC.decode(descriptor),
                    JsonFields.requiredInt(json, "in_flight"),
                    json.getValue("in_flight_prefill_tokens") == null
                            ? 0
                            : JsonFields.requiredLong(json, "in_flight_prefill_tokens"));
        }
    };
}
