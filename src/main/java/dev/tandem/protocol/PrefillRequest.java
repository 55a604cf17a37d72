package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * PREFILL_REQUEST: compute the prompt's KV, ship it to {@code decodeWorkerId}, answer with the first
 * token. The prefill worker never talks to the router except through the reply. {@code routerNode} is
 * the router's cluster member (null if unknown): when that member leaves, the work is dropped.
 * {@code attempt} numbers the router's dispatches of the request; the KV chunks carry it on.
 */
public record PrefillRequest(
        long requestId, int[] promptTokens, String decodeWorkerId, Sampling sampling, String routerNode, int attempt) {

    public PrefillRequest(
            long requestId, int[] promptTokens, String decodeWorkerId, Sampling sampling, String routerNode) {
        this(requestId, promptTokens, decodeWorkerId, sampling, routerNode, 0);
    }

    public static final JsonCodec<PrefillRequest> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(PrefillRequest r) {
            return new JsonObject()
                    .put("request_id", r.requestId)
                    .put("prompt_tokens", JsonFields.ints(r.promptTokens))
                    .put("decode_worker", r.decodeWorkerId)
                    .put("sampling", SamplingCodec.INSTANCE.encode(r.sampling))
                    .put("router_node", r.routerNode)
                    .put("attempt", r.attempt);
        }

        @Override
        public PrefillRequest decode(JsonObject json) {
            return new PrefillRequest(
                    JsonFields.requiredLong(json, "request_id"),
                    JsonFields.requiredInts(json, "prompt_tokens"),
                    JsonFields.requiredString(json, "decode_worker"),
                    SamplingCodec.INSTANCE.decode(JsonFields.requiredObject(json, "sampling")),
                    JsonFields.optionalString(json, "router_node"),
                    JsonFields.optionalInt(json, "attempt", 0));
        }
    };
}
