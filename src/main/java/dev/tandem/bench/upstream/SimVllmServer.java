package dev.tandem.bench.upstream;

import dev.tandem.engine.sim.SimProfile;
import dev.tandem.engine.tokenizer.ByteTokenizer;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A sim engine behind vLLM's HTTP API, as {@code vllm serve --kv-transfer-config '{"kv_connector":
 * "NixlConnector", ...}' --kv-events-config '{...}'} runs on a GPU: {@code /v1/models}, {@code /health},
 * Prometheus {@code /metrics}, {@code /tokenize}, {@code /detokenize}, and {@code /v1/completions} in
 * the P/D flow vLLM's proxy drives — a prefill instance answers {@code kv_transfer_params} naming its
 * KV; a decode instance given those pulls the KV (the profile's interconnect time) and streams the
 * answer. Prefill instances publish their prefix cache's KV events over ZeroMQ in vLLM's format, with
 * their own hash scheme. The benchmark's {@code --via upstream} puts one in front of every sim worker,
 * so Tandem's upstream workers route to them as to GPU servers. On 127.0.0.1.
 */
public final class SimVllmServer implements AutoCloseable {
    /** Engine id → instance: stands in for NIXL's side channel between instances of one machine. */
    private static final Map<String, SimVllmServer> ENGINES = new ConcurrentHashMap<>();

    private final String engineId;
    private final String model;
    private final SimProfile profile;
    private final double timeScale;
    private final int blockSize;
    private final Vertx vertx;
    private final SimPrefillEngine prefill;
    private final VllmKvEventPublisher events;
    private final SimDecodeEngine decode;
    private HttpServer server;

    private SimVllmServer(
            Vertx vertx,
            String engineId,
            String model,
            SimProfile profile,
            double timeScale,
            int blockSize,
            SimPrefillEngine prefill,
            VllmKvEventPublisher events,
            SimDecodeEngine decode) {
        this.vertx = vertx;
        this.engineId = engineId;
        this.model = model;
        this.profile = profile;
        this.timeScale = timeScale;
        this.blockSize = blockSize;
        this.prefill = prefill;
        this.events = events;
        this.decode = decode;
    }

    /** A prefill instance with a prefix cache of {@code cacheBytes} (the profile's KV bytes per token). */
    public static SimVllmServer prefill(
            Vertx vertx,
            String name,
            String model,
            SimProfile profile,
            double timeScale,
            int blockSize,
            long cacheBytes) {
        VllmKvEventPublisher events = new VllmKvEventPublisher(name);
        long blocks = cacheBytes / (profile.kvBytesPerToken() * blockSize);
        SimBlockCache cache = new SimBlockCache(blockSize, blocks, name.hashCode() * 0x9E3779B97F4A7C15L);
        SimPrefillEngine engine = new SimPrefillEngine(name, profile, timeScale, cache, events);
        return new SimVllmServer(vertx, name, model, profile, timeScale, blockSize, engine, events, null).listen();
    }

    /** A decode instance running at most {@code maxBatch} sequences at a time. */
    public static SimVllmServer decode(
            Vertx vertx, String name, String model, SimProfile profile, double timeScale, int maxBatch) {
        SimDecodeEngine engine = new SimDecodeEngine(name, profile, timeScale, maxBatch);
        return new SimVllmServer(vertx, name, model, profile, timeScale, 0, null, null, engine).listen();
    }

    private SimVllmServer listen() {
        server = vertx.createHttpServer()
                .requestHandler(this::handle)
                .listen(0, "127.0.0.1")
                .await();
        ENGINES.put(engineId, this);
        return this;
    }

    public String url() {
        return "http://127.0.0.1:" + server.actualPort();
    }

    /** The KV event publisher's endpoint ("" for a decode instance, which publishes none). */
    public String kvEventsEndpoint() {
        return events == null ? "" : events.endpoint();
    }

    public String kvEventsReplayEndpoint() {
        return events == null ? "" : events.replayEndpoint();
    }

    private void handle(HttpServerRequest req) {
        req.body().onSuccess(b -> {
            JsonObject body;
            try {
                body = b.length() == 0 ? new JsonObject() : b.toJsonObject();
            } catch (RuntimeException e) {
                SimVllmProtocol.error(req.response(), 400, "the body is not JSON");
                return;
            }
            switch (req.path()) {
                case "/v1/models" ->
                    SimVllmProtocol.json(
                            req.response(), 200, SimVllmProtocol.models(model, "vllm", profile.contextLength()));
                case "/health" -> req.response().end();
                case "/metrics" ->
                    req.response()
                            .putHeader("Content-Type", "text/plain; version=0.0.4")
                            .end(metrics());
                case "/tokenize" -> tokenize(req.response(), body);
                case "/detokenize" -> detokenize(req.response(), body);
                case "/v1/completions" -> complete(req.response(), body);
                default -> SimVllmProtocol.error(req.response(), 404, "no route " + req.path());
            }
        });
    }

    private String metrics() {
        String labels = "{engine=\"0\",model_name=\"" + model + "\"}";
        int running = prefill != null ? prefill.running() : decode.running();
        int waiting = prefill != null ? prefill.waiting() : decode.waiting();
        double usage = prefill != null
                ? prefill.cacheUsage()
                : Math.min(1, (double) decode.contextTokens() * profile.kvBytesPerToken() / profile.kvMemoryBytes());
        return "# TYPE vllm:num_requests_running gauge\n" + "vllm:num_requests_running" + labels + " " + running
                + "\n# TYPE vllm:num_requests_waiting gauge\n" + "vllm:num_requests_waiting" + labels + " " + waiting
                + "\n# TYPE vllm:kv_cache_usage_perc gauge\n" + "vllm:kv_cache_usage_perc" + labels + " "
                + String.format(Locale.ROOT, "%.6f", usage) + "\n";
    }

    private void tokenize(HttpServerResponse response, JsonObject body) {
        if (!(body.getValue("prompt") instanceof String text)) {
            SimVllmProtocol.error(response, 400, "this model has no chat template: /tokenize takes a prompt");
            return;
        }
        int[] ids = ByteTokenizer.INSTANCE.encode(text, body.getBoolean("add_special_tokens", true));
        SimVllmProtocol.json(
                response,
                200,
                new JsonObject()
                        .put("count", ids.length)
                        .put("max_model_len", profile.contextLength())
                        .put("tokens", SimVllmProtocol.ids(ids)));
    }

    private void detokenize(HttpServerResponse response, JsonObject body) {
        JsonArray tokens = body.getJsonArray("tokens", new JsonArray());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object t : tokens) {
            int id = t instanceof Number n ? n.intValue() : -1;
            if (id < 0 || id >= ByteTokenizer.VOCAB_SIZE) {
                SimVllmProtocol.error(response, 400, "Token id " + t + " is out of vocabulary");
                return;
            }
            out.writeBytes(ByteTokenizer.INSTANCE.decode(-1, id));
        }
        SimVllmProtocol.json(response, 200, new JsonObject().put("prompt", out.toString(StandardCharsets.UTF_8)));
    }

    private void complete(HttpServerResponse response, JsonObject body) {
        int[] prompt;
        try {
            prompt = SimVllmProtocol.prompt(body);
        } catch (IllegalArgumentException e) {
            SimVllmProtocol.error(response, 400, e.getMessage());
            return;
        }
        JsonObject params = body.getJsonObject("kv_transfer_params");
        if (prefill != null) {
            if (params == null || !params.getBoolean("do_remote_decode", false)) {
                SimVllmProtocol.error(
                        response, 400, "this sim instance only prefills for a remote decode (kv_transfer_params)");
                return;
            }
            prefill.prefill(prompt)
                    .onSuccess(done -> SimVllmProtocol.json(
                            response,
                            200,
                            SimVllmProtocol.prefillAnswer(
                                    model, prompt, done, engineId, server.actualPort(), blockSize)))
                    .onFailure(e -> SimVllmProtocol.error(response, 500, e.getMessage()));
            return;
        }
        if (params == null || !params.getBoolean("do_remote_prefill", false)) {
            SimVllmProtocol.error(
                    response,
                    400,
                    "this sim instance only decodes what a prefill instance computed (kv_transfer_params)");
            return;
        }
        SimVllmServer from = ENGINES.get(params.getString("remote_engine_id", ""));
        long bytes = from == null || from.prefill == null
                ? -1
                : from.prefill.pull(params.getString("remote_request_id", ""));
        if (bytes < 0) {
            SimVllmProtocol.error(response, 500, "no KV to pull for " + params.encode());
            return;
        }
        int maxTokens = body.getInteger("max_tokens", 16);
        Context context = vertx.getOrCreateContext();
        long transferMs = Math.max(1, Math.round(profile.transferNanos(bytes) / timeScale / 1e6));
        vertx.setTimer(transferMs, t -> {
            SimDecodeStream stream = new SimDecodeStream(context, response, model, prompt.length);
            decode.add(stream, prompt.length, prompt[prompt.length - 1], Math.max(1, maxTokens));
        });
    }

    @Override
    public void close() {
        ENGINES.remove(engineId, this);
        if (server != null) {
            server.close().await();
        }
        if (prefill != null) {
            prefill.close();
            events.close();
        } else {
            decode.close();
        }
    }
}
