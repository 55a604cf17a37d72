package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.Map;

/**
 * A router replica's report of its dispatches, published to every node on each change and each
 * heartbeat: requests it has in flight per worker, in total, the prompt tokens it has sent each worker
 * to prefill and not yet seen prefilled, the cluster member it runs on (so the report can be dropped
 * the moment that member leaves), and per model the token rates its admitted requests brought over the
 * scaling window: every replica adds the others' to its own, so the scaling signals of each count the
 * whole cluster's demand, whichever replica a load balancer sent it to.
 */
public record RouterLoad(
        String routerId,
        String nodeId,
        int requestsInFlight,
        Map<String, Integer> inFlight,
        Map<String, Long> prefillTokens,
        Map<String, TokenRates> tokenRates) {

    /** One model's rates on one replica, per second: uncached prompt tokens arriving, output tokens delivered. */
    public record TokenRates(double uncachedPromptTokensPerSec, double outputTokensPerSec) {}

    public RouterLoad {
        inFlight = Map.copyOf(inFlight);
        prefillTokens = Map.copyOf(prefillTokens);
        tokenRates = Map.copyOf(tokenRates);
    }

    public RouterLoad(
            String routerId,
            String nodeId,
            int requestsInFlight,
            Map<String, Integer> inFlight,
            Map<String, Long> prefillTokens) {
        this(routerId, nodeId, requestsInFlight, inFlight, prefillTokens, Map.of());
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
            JsonObject rates = new JsonObject();
            r.tokenRates.forEach((model, t) -> rates.put(
                    model,
                    new JsonObject()
                            .put("uncached_prompt_tokens_per_sec", t.uncachedPromptTokensPerSec())
                            .put("output_tokens_per_sec", t.outputTokensPerSec())));
            return new JsonObject()
                    .put("router", r.routerId)
                    .put("node", r.nodeId)
                    .put("requests_in_flight", r.requestsInFlight)
                    .put("in_flight", perWorker)
                    .put("prefill_tokens", tokens)
                    .put("token_rates", rates);
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
                    tokens,
                    tokenRates(json));
        }

        /** Optional, as prefill_tokens: a replica of an older version does not report them. */
        private Map<String, TokenRates> tokenRates(JsonObject json) {
            Map<String, TokenRates> out = new HashMap<>();
            JsonObject rates = json.getValue("token_rates") == null
                    ? new JsonObject()
                    : JsonFields.requiredObject(json, "token_rates");
            for (String model : rates.fieldNames()) {
                JsonObject m = JsonFields.requiredObject(rates, model);
                double prompt = rate(m, "uncached_prompt_tokens_per_sec", model);
                out.put(model, new TokenRates(prompt, rate(m, "output_tokens_per_sec", model)));
            }
            return out;
        }

        private double rate(JsonObject m, String field, String model) {
            if (!(m.getValue(field) instanceof Number n) || !(n.doubleValue() >= 0) || n.doubleValue() > 1e15) {
                throw new ProtocolException("token_rates." + model + "." + field + " must be a non-negative number");
            }
            return n.doubleValue();
        }
    };
}
