package dev.tandem.protocol;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * The worker bridge's answer to a {@link WorkerJoin}: the worker's id and hosting member, how often
 * to heartbeat and how long silence is tolerated, the model the cluster serves (so an engine can check
 * its vocabulary and context), and the addresses it now receives on.
 */
public record WorkerWelcome(
        String workerId, String nodeId, long heartbeatMs, long idleTimeoutMs, ModelSpec model, List<String> addresses) {

    /**
     * What an external engine must agree with: the router tokenizes, so ids and limits are the cluster's.
     * {@code endTokens} are the tokenizer's end-of-sequence ids, which end generation like stop tokens.
     */
    public record ModelSpec(String name, int vocabSize, int seqLen, int bos, int eos, List<Integer> endTokens) {
        public ModelSpec {
            endTokens = List.copyOf(endTokens);
        }
    }

    public static final JsonCodec<WorkerWelcome> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(WorkerWelcome w) {
            return new JsonObject()
                    .put("worker_id", w.workerId)
                    .put("node_id", w.nodeId)
                    .put("heartbeat_ms", w.heartbeatMs)
                    .put("idle_timeout_ms", w.idleTimeoutMs)
                    .put(
                            "model",
                            new JsonObject()
                                    .put("name", w.model.name())
                                    .put("vocab_size", w.model.vocabSize())
                                    .put("seq_len", w.model.seqLen())
                                    .put("bos", w.model.bos())
                                    .put("eos", w.model.eos())
                                    .put("end_tokens", new JsonArray(new ArrayList<>(w.model.endTokens()))))
                    .put("addresses", new JsonArray(new ArrayList<>(w.addresses)));
        }

        @Override
        public WorkerWelcome decode(JsonObject json) {
            JsonObject m = JsonFields.requiredObject(json, "model");
            List<Integer> ends = new ArrayList<>();
            for (int t : JsonFields.requiredInts(m, "end_tokens")) {
                ends.add(t);
            }
            Object raw = json.getValue("addresses");
            if (!(raw instanceof JsonArray array)) {
                throw new ProtocolException("field 'addresses' must be an array");
            }
            List<String> addresses = new ArrayList<>(array.size());
            for (Object a : array) {
                if (!(a instanceof String s)) {
                    throw new ProtocolException("field 'addresses' must hold strings");
                }
                addresses.add(s);
            }
            return new WorkerWelcome(
                    JsonFields.requiredString(json, "worker_id"),
                    JsonFields.requiredString(json, "node_id"),
                    JsonFields.requiredLong(json, "heartbeat_ms"),
                    JsonFields.requiredLong(json, "idle_timeout_ms"),
                    new ModelSpec(
                            JsonFields.requiredString(m, "name"),
                            JsonFields.requiredInt(m, "vocab_size"),
                            JsonFields.requiredInt(m, "seq_len"),
                            JsonFields.requiredInt(m, "bos"),
                            JsonFields.requiredInt(m, "eos"),
                            ends),
                    List.copyOf(addresses));
        }
    };
}
