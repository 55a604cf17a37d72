package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/** An external worker's periodic word over the worker bridge: its load, and whether it is draining. */
public record WorkerHeartbeat(WorkerLoad load, boolean draining) {

    public static final JsonCodec<WorkerHeartbeat> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(WorkerHeartbeat h) {
            return new JsonObject().put("load", WorkerLoad.CODEC.encode(h.load)).put("draining", h.draining);
        }

        @Override
        public WorkerHeartbeat decode(JsonObject json) {
            Object draining = json.getValue("draining");
            if (draining != null && !(draining instanceof Boolean)) {
                throw new ProtocolException("field 'draining' must be a boolean");
            }
            WorkerLoad load = WorkerLoad.CODEC.decode(JsonFields.requiredObject(json, "load"));
            if (load.queuedPrefillTokens() < 0
                    || load.activeSequences() < 0
                    || load.kvBytesUsed() < 0
                    || load.kvBytesCapacity() < 0
                    || load.decodeSteps() < 0) {
                throw new ProtocolException("load figures must not be negative");
            }
            return new WorkerHeartbeat(load, Boolean.TRUE.equals(draining));
        }
    };
}
