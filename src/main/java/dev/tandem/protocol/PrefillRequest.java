package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * PREFILL_REQUEST: compute the prompt's KV, ship it to {@code decodeWorkerId}, answer with the first
 * token. {@code routerNode} is the router's cluster member (null if unknown): when that member leaves,
 * the work is dropped.
 * {@code attempt} numbers the router's dispatches of the request; the KV chunks carry it on.
 * {@code decodeCachedBlocks}: {@link #NO_DECODE_CACHE} when the decode worker announces no KV cache (it
 * gets the whole KV, TKV1), else how many of the prompt's leading blocks the router believes it holds
 * (the rest is shipped, TKV2; the decode worker asks for more if it lost some). When the decode worker
 * is this worker itself, it prefills locally and ships nothing. {@code routerId} (nullable): the router
 * to send the first token to as soon as it is computed ({@link FirstToken}), ahead of PREFILL_DONE.
 */
public record PrefillRequest(
        long requestId,
        int[] promptTokens,
        String decodeWorkerId,
        Sampling sampling,
        String routerNode,
        int attempt,
        int decodeCachedBlocks,
        String routerId) {
    public static final int NO_DECODE_CACHE = -1;

    public PrefillRequest(
            long requestId,
            int[] promptTokens,
            String decodeWorkerId,
            Sampling sampling,
            String routerNode,
            int attempt) {
        this(requestId, promptTokens, decodeWorkerId, sampling, routerNode, attempt, NO_DECODE_CACHE, null);
    }

    public PrefillRequest(
            long requestId, int[] promptTokens, String decodeWorkerId, Sampling sampling, String routerNode) {
        this(requestId, promptTokens, decodeWorkerId, sampling, routerNode, 0);
    }

    public static final JsonCodec<PrefillRequest> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(PrefillRequest r) {
            JsonObject json = new JsonObject()
                    .put("request_id", r.requestId)
                    .put("prompt_tokens", JsonFields.ints(r.promptTokens))
                    .put("decode_worker", r.decodeWorkerId)
                    .put("sampling", SamplingCodec.INSTANCE.encode(r.sampling))
                    .put("router_node", r.routerNode)
                    .put("attempt", r.attempt);
            if (r.routerId != null) {
                json.put("router_id", r.routerId);
            }
            return r.decodeCachedBlocks == NO_DECODE_CACHE
                    ? json
                    : json.put("decode_cached_blocks", r.decodeCachedBlocks);
        }

        @Override
        public PrefillRequest decode(JsonObject json) {
            return new PrefillRequest(
                    JsonFields.requiredLong(json, "request_id"),
                    JsonFields.requiredInts(json, "prompt_tokens"),
                    JsonFields.requiredString(json, "decode_worker"),
                    SamplingCodec.INSTANCE.decode(JsonFields.requiredObject(json, "sampling")),
                    JsonFields.optionalString(json, "router_node"),
                    JsonFields.optionalInt(json, "attempt", 0),
                    JsonFields.optionalInt(json, "decode_cached_blocks", NO_DECODE_CACHE),
                    JsonFields.optionalString(json, "router_id"));
        }
    };
}
