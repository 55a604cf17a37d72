package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.Map;

/**
 * A router replica's report of its dispatches, published to every node on each change and each
 * heartbeat: requests it has in flight per worker, in total, the prompt tokens it has sent each worker
 * to prefill and not yet seen prefilled, and the cluster member it runs on (so the report can be dropped
 * the moment that member leaves).
 */
public record RouterLoad(
        String routerId,
        String nodeId,
        int requestsInFlight,
        Map<String, Integer> inFlight,
        Map<String, Long> prefillTokens) {

    public RouterLoad {
        inFlight = Map.copyOf(inFlight);
        prefillTokens = Map.copyOf(prefillTokens);
    }

    public RouterLoad(String routerId, String nodeId, int requestsInFlight, Map<String, Integer> inFlight) {
        this(routerId, nodeId, requestsInFlight, inFlight, Map.of());
    }

    public int inFlight(String workerId) {
        return inFlight.getOrDefault(workerId, 0);
    }

    public static final JsonCodec<RouterLoad> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(RouterLoad r) {
            JsonObject perWorker = new JsonObject();
            r.inFlight.forEach(perWorker::put);
            JsonObject tokens = new JsonObject();
            r.prefillTokens.forEach(tokens::put);
            return new JsonObject()
                    .put("router", r.routerId)
                    .put("node", r.nodeId)
                    .put("requests_in_flight", r.requestsInFlight)
                    .put("in_flight", perWorker)
                    .put("prefill_tokens", tokens);
        }

        @Override
        public RouterLoad decode(JsonObject json) {
            JsonObject perWorker = JsonFields.requiredObject(json, "in_flight");
            Map<String, Integer> inFlight = new HashMap<>();
            for (String worker : perWorker.fieldNames()) {
                int n = JsonFields.requiredInt(perWorker, worker);
                if (n < 0) {
                    throw new ProtocolException("in_flight." + worker + " is negative");
                }
                inFlight.put(worker, n);
            }
            Map<String, Long> tokens = new HashMap<>();
            // Optional: a replica of an older version does not report them.
            JsonObject perWorkerTokens = json.getValue("prefill_tokens") == null
                    ? new JsonObject()
                    : JsonFields.requiredObject(json, "prefill_tokens");
            for (String worker : perWorkerTokens.fieldNames()) {
                long n = JsonFields.requiredLong(perWorkerTokens, worker);
                if (n < 0) {
                    throw new ProtocolException("prefill_tokens." + worker + " is negative");
                }
                tokens.put(worker, n);
            }
            return new RouterLoad(
                    JsonFields.requiredString(json, "router"),
                    JsonFields.requiredString(json, "node"),
                    JsonFields.requiredInt(json, "requests_in_flight"),
                    inFlight,
                    tokens);
        }
    };
}
