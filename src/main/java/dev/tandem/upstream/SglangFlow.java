package dev.tandem.upstream;

import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.KvHandle;
import dev.tandem.protocol.PrefillRequest;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.logging.Logger;

/**
 * SGLang's disaggregated serving, as its router runs it in PD mode: one bootstrap room per request
 * ({@code bootstrap_host}, {@code bootstrap_port} of the prefill instance, a fresh 63-bit
 * {@code bootstrap_room}) goes into both requests, which run at once: the prefill instance waits for
 * the decode instance to join the room, then moves the KV. The decode stream is the answer. Requests
 * go to the native {@code /generate} with {@code input_ids}, whose stream carries {@code output_ids}.
 */
final class SglangFlow implements UpstreamFlow {
    private static final Logger LOG = Logger.getLogger(SglangFlow.class.getName());
    static final String GENERATE = "/generate";

    private final String bootstrapHost;
    private final int bootstrapPort;

    SglangFlow(String bootstrapHost, int bootstrapPort) {
        this.bootstrapHost = bootstrapHost;
        this.bootstrapPort = bootstrapPort;
    }

    @Override
    public Future<Integer> prefill(
            UpstreamClient client,
            String model,
            PrefillRequest r,
            UpstreamClient.Cancel cancel,
            Function<JsonObject, Future<Void>> handOver) {
        JsonObject room = new JsonObject()
                .put("bootstrap_host", bootstrapHost)
                .put("bootstrap_port", bootstrapPort)
                .put("bootstrap_room", ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE);
        JsonObject body = new JsonObject()
                .put("input_ids", VllmFlow.ids(r.promptTokens()))
                .put("sampling_params", samplingParams(r.sampling(), 1))
                .put("stream", false)
                .mergeIn(room);
        // Not awaited: the prefill instance answers only once the decode instance, started after the
        // hand-over, has joined the room. Its failure shows on the decode stream, which then fails too.
        client.postJson(GENERATE, body, cancel)
                .onFailure(e -> LOG.info("SGLang prefill of request " + r.requestId() + " failed: " + e.getMessage()));
        return handOver.apply(room).map(0);
    }

    @Override
    public String decodePath() {
        return GENERATE;
    }

    @Override
    public JsonObject decodeBody(String model, KvHandle handle, DecodeRequest r) {
        return new JsonObject()
                .put("input_ids", VllmFlow.ids(handle.promptTokens()))
                .put("sampling_params", samplingParams(r.sampling(), r.maxNewTokens()))
                .put("stream", true)
                .mergeIn(handle.params().copy());
    }

    private static JsonObject samplingParams(dev.tandem.protocol.Sampling s, int maxNewTokens) {
        JsonObject p = new JsonObject()
                .put("max_new_tokens", maxNewTokens)
                .put("temperature", s.temperature())
                .put("top_p", s.topP())
                .put("sampling_seed", s.seed());
        if (s.topK() > 0) {
            p.put("top_k", s.topK());
        }
        return p;
    }

    /** {@code output_ids} may be cumulative or per chunk: {@code meta_info.completion_tokens} says how many so far. */
    @Override
    public Chunk chunk(JsonObject event, int seen) {
        JsonArray ids = event.getJsonArray("output_ids");
        JsonObject meta = event.getJsonObject("meta_info");
        if (ids == null || meta == null || meta.getInteger("completion_tokens") == null) {
            throw new UpstreamException(0, "an SGLang stream event without output_ids and meta_info.completion_tokens");
        }
        int total = meta.getInteger("completion_tokens");
        int fresh = Math.max(0, Math.min(total - seen, ids.size()));
        int[] all = VllmFlow.ints(ids);
        int[] tokens = Arrays.copyOfRange(all, all.length - fresh, all.length);
        Object finish = meta.getValue("finish_reason");
        String reason = finish instanceof JsonObject f ? f.getString("type", "stop") : (String) null;
        if ("abort".equals(reason)) {
            throw new UpstreamException(0, "the SGLang decode instance aborted the request: " + finish);
        }
        return new Chunk(tokens, reason);
    }
}
