package dev.tandem.upstream;

import dev.tandem.config.UpstreamSettings;
import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.KvHandle;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.Sampling;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.function.Function;

/**
 * How one kind of upstream runs a disaggregated request: what the prefill instance is sent, what the
 * decode instance is sent, and how its stream's events read.
 */
public interface UpstreamFlow {

    /** The tokens and end one decode event carries; {@code tokens} are those not seen before. */
    record Chunk(int[] tokens, String finishReason) {}

    static UpstreamFlow of(UpstreamSettings settings) {
        return settings.sglang()
                ? new SglangFlow(settings.bootstrapHostOrUrlHost(), settings.bootstrapPort())
                : new VllmFlow();
    }

    /**
     * Runs the prefill phase on {@code client}; {@code handOver} delivers the decode worker's KV handle
     * params and completes once it has them. Completes with the prompt tokens the upstream had cached.
     */
    Future<Integer> prefill(
            UpstreamClient client,
            String model,
            PrefillRequest request,
            UpstreamClient.Cancel cancel,
            Function<JsonObject, Future<Void>> handOver);

    String decodePath();

    JsonObject decodeBody(String model, KvHandle handle, DecodeRequest request);

    /** Reads one stream event, given how many tokens the stream has produced so far. */
    Chunk chunk(JsonObject event, int seen);

    /** The OpenAI sampling fields Tandem's sampling maps to (top_k only when it cuts). */
    static JsonObject sampling(JsonObject into, Sampling s) {
        into.put("temperature", s.temperature()).put("top_p", s.topP()).put("seed", s.seed());
        if (s.topK() > 0) {
            into.put("top_k", s.topK());
        }
        return into;
    }
}
