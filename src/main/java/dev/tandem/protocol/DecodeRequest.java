package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * DECODE_REQUEST: join the request whose KV was shipped to the batch. {@code firstToken} (from
 * PREFILL_DONE) is generated token 0; the worker generates tokens 1 … {@code maxNewTokens - 1} and
 * sends them to {@code routerId}'s token address. {@code routerNode} is that router's cluster member
 * (null if unknown): when it leaves, nobody is listening and the sequence is dropped. {@code attempt} is
 * the dispatch whose KV it claims (the one its PREFILL_REQUEST carried).
 */
public record DecodeRequest(
        long requestId,
        int firstToken,
        int maxNewTokens,
        Sampling sampling,
        int[] stopTokens,
        String routerId,
        String routerNode,
        int attempt) {

    public DecodeRequest(
            long requestId,
            int firstToken,
            int maxNewTokens,
            Sampling sampling,
            int[] stopTokens,
            String routerId,
            String routerNode) {
        this(requestId, firstToken, maxNewTokens, sampling, stopTokens, routerId, routerNode, 0);
    }

    public static final JsonCodec<DecodeRequest> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(DecodeRequest r) {
            return new JsonObject()
                    .put("request_id", r.requestId)
                    .put("first_token", r.firstToken)
                    .put("max_new_tokens", r.maxNewTokens)
                    .put("sampling", SamplingCodec.INSTANCE.encode(r.sampling))
                    .put("stop_tokens", JsonFields.ints(r.stopTokens))
                    .put("router", r.routerId)
                    .put("router_node", r.routerNode)
                    .put("attempt", r.attempt);
        }

        @Override
        public DecodeRequest decode(JsonObject json) {
            return new DecodeRequest(
                    JsonFields.requiredLong(json, "request_id"),
                    JsonFields.requiredInt(json, "first_token"),
                    JsonFields.requiredInt(json, "max_new_tokens"),
                    SamplingCodec.INSTANCE.decode(JsonFields.requiredObject(json, "sampling")),
                    JsonFields.requiredInts(json, "stop_tokens"),
                    JsonFields.requiredString(json, "router"),
                    JsonFields.optionalString(json, "router_node"),
                    JsonFields.optionalInt(json, "attempt", 0));
        }
    };
}
