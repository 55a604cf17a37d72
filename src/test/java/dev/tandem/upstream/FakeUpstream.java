package dev.tandem.upstream;

import dev.tandem.bench.upstream.SimVllmProtocol;
import dev.tandem.engine.tokenizer.BpeTokenizer;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An in-test vLLM or SGLang server in prefill or decode mode (no GPU), on 127.0.0.1 and a free port. It
 * answers as those servers do — {@code /v1/models}, {@code /tokenize}, {@code /detokenize},
 * {@code /health}, Prometheus {@code /metrics}, and vLLM's {@code /v1/completions} with
 * {@code kv_transfer_params} or SGLang's {@code /generate} with a bootstrap room — records every
 * generation request it receives, and can be told to fail in the ways a real server does.
 *
 * <p>What a decode instance generates is {@link #ANSWER}, tokenized, cut at the request's token limit.
 */
final class FakeUpstream {
    static final String MODEL = "fake-llama";
    static final int CONTEXT = 8192;
    static final String ANSWER = "Paris is the capital and";

    enum Kind {
        VLLM,
        SGLANG
    }

    enum Fault {
        NONE,
        /** 400 with an OpenAI-shaped error body. */
        BAD_REQUEST,
        /** 500 with an error body. */
        SERVER_ERROR,
        /** Never answers generation requests. */
        HANG,
        /** A decode stream whose second event is not JSON. */
        MALFORMED_SSE,
        /** A decode stream that sends two chunks, then drops the connection. */
        DIE_MID_STREAM,
        /** A decode stream that sends one chunk, then goes silent. */
        STALL_MID_STREAM,
        /** A decode stream that sends one chunk, then only SSE keep-alive comments, forever. */
        TRICKLE
    }

    /** The SGLang rooms decode instances joined: a prefill instance answers once its room is joined. */
    static final Map<Long, Boolean> ROOMS = new ConcurrentHashMap<>();

    final Kind kind;
    final boolean prefillMode;
    final List<JsonObject> received = new CopyOnWriteArrayList<>();
    /** The {@code traceparent} header of every generation request (null where it had none). */
    final List<String> traceparents = new CopyOnWriteArrayList<>();
    /** Generation requests whose connection the client closed before the answer ended. */
    final java.util.concurrent.atomic.AtomicInteger closedEarly = new java.util.concurrent.atomic.AtomicInteger();

    volatile Fault fault = Fault.NONE;
    /** How many more {@code /v1/models} calls are read and never answered, as by a server still starting. */
    final java.util.concurrent.atomic.AtomicInteger unansweredModelCalls =
            new java.util.concurrent.atomic.AtomicInteger();
    /** A tokenizer.json vocabulary served instead of {@link FakeVocabulary}'s (null: that one). */
    volatile BpeTokenizer bpe;
    /** What a decode instance generates. */
    volatile String answerText = ANSWER;
    /** {@code /detokenize} calls answered: learning a vocabulary must not take one per token. */
    final java.util.concurrent.atomic.AtomicInteger detokenizeCalls = new java.util.concurrent.atomic.AtomicInteger();

    /** Told every generation request's prompt token ids (a prefix cache's events follow from them). */
    volatile java.util.function.Consumer<int[]> onPrompt = prompt -> {};

    volatile boolean healthy = true;
    volatile int running;
    volatile int waiting;
    volatile double kvUsage;
    private final Vertx vertx;
    private HttpServer server;

    FakeUpstream(Vertx vertx, Kind kind, boolean prefillMode) {
        this.vertx = vertx;
        this.kind = kind;
        this.prefillMode = prefillMode;
    }

    FakeUpstream start() {
        server = vertx.createHttpServer()
                .requestHandler(this::handle)
                .listen(0, "127.0.0.1")
                .await();
        return this;
    }

    Vertx vertx() {
        return vertx;
    }

    String url() {
        return "http://127.0.0.1:" + server.actualPort();
    }

    void stop() {
        if (server != null) {
            server.close().await();
        }
    }

    /**
     * The fake model's own chat template, as vLLM's /tokenize applies it to {@code messages}: BOS,
     * then "[role] content" per turn, and "[assistant]" to open the reply; like real templates it
     * refuses two user turns in a row.
     */
    static String renderChat(JsonArray messages, boolean addGenerationPrompt) {
        StringBuilder sb = new StringBuilder();
        String last = "";
        for (Object o : messages) {
            JsonObject m = (JsonObject) o;
            if (m.getString("role").equals("user") && last.equals("user")) {
                throw new IllegalArgumentException(
                        "Conversation roles must alternate user/assistant/user/assistant/...");
            }
            last = m.getString("role");
            sb.append('[')
                    .append(last)
                    .append("] ")
                    .append(m.getString("content"))
                    .append('\n');
        }
        return addGenerationPrompt ? sb.append("[assistant] ").toString() : sb.toString();
    }

    final List<JsonObject> chatTokenizeRequests = new java.util.concurrent.CopyOnWriteArrayList<>();

    private void tokenizeChat(HttpServerRequest req, JsonObject body) {
        chatTokenizeRequests.add(body);
        String text;
        try {
            text = renderChat(body.getJsonArray("messages"), body.getBoolean("add_generation_prompt", true));
        } catch (IllegalArgumentException e) {
            json(req.response(), 400, new JsonObject().put("error", new JsonObject().put("message", e.getMessage())));
            return;
        }
        int[] ids = encode(text, true); // the template's BOS; add_special_tokens is false
        json(req.response(), 200, new JsonObject().put("count", ids.length).put("tokens", ids(ids)));
    }

    private void handle(HttpServerRequest req) {
        req.body().onSuccess(b -> {
            String path = req.path();
            JsonObject body = b.length() == 0 ? new JsonObject() : b.toJsonObject();
            switch (path) {
                case "/v1/models" -> {
                    if (unansweredModelCalls.getAndUpdate(n -> Math.max(0, n - 1)) == 0) {
                        json(req.response(), 200, models());
                    }
                }
                case "/health" ->
                    req.response().setStatusCode(healthy ? 200 : 503).end();
                case "/metrics" ->
                    req.response()
                            .putHeader("Content-Type", "text/plain; version=0.0.4")
                            .end(metrics());
                case "/tokenize" -> {
                    if (body.containsKey("messages")) {
                        tokenizeChat(req, body);
                        return;
                    }
                    int[] ids = encode(body.getString("prompt"), body.getBoolean("add_special_tokens", true));
                    json(
                            req.response(),
                            200,
                            new JsonObject()
                                    .put("count", ids.length)
                                    .put("max_model_len", CONTEXT)
                                    .put("tokens", ids(ids)));
                }
                case "/detokenize" -> detokenize(req.response(), body);
                case "/v1/completions", "/generate" -> {
                    traceparents.add(req.getHeader("traceparent"));
                    generate(req.response(), body);
                }
                default -> req.response().setStatusCode(404).end();
            }
        });
    }

    /** The sim instances' listing, with fields Tandem does not read (as real servers send them). */
    private JsonObject models() {
        JsonObject models = SimVllmProtocol.models(MODEL, kind == Kind.VLLM ? "vllm" : "sglang", CONTEXT);
        models.getJsonArray("data").getJsonObject(0).put("created", 1764720000).putNull("parent");
        return models;
    }

    private String metrics() {
        if (kind == Kind.VLLM) {
            String labels = "{engine=\"0\",model_name=\"" + MODEL + "\"}";
            return "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
                    + "# TYPE vllm:num_requests_running gauge\n"
                    + "vllm:num_requests_running" + labels + " " + (double) running + "\n"
                    + "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
                    + "# TYPE vllm:num_requests_waiting gauge\n"
                    + "vllm:num_requests_waiting" + labels + " " + (double) waiting + "\n"
                    + "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n"
                    + "# TYPE vllm:kv_cache_usage_perc gauge\n"
                    + "vllm:kv_cache_usage_perc" + labels + " " + kvUsage + "\n"
                    + "# TYPE vllm:prompt_tokens_total counter\n"
                    + "vllm:prompt_tokens_total" + labels + " 1234.0\n";
        }
        String labels = "{model_name=\"" + MODEL + "\",engine_type=\"unified\",tp_rank=\"0\",pp_rank=\"0\"}";
        return "# HELP sglang:num_running_reqs The number of running requests.\n"
                + "# TYPE sglang:num_running_reqs gauge\n"
                + "sglang:num_running_reqs" + labels + " " + (double) running + "\n"
                + "# HELP sglang:num_queue_reqs The number of requests in the waiting queue.\n"
                + "# TYPE sglang:num_queue_reqs gauge\n"
                + "sglang:num_queue_reqs" + labels + " " + (double) waiting + "\n"
                + "# HELP sglang:token_usage The token usage.\n"
                + "# TYPE sglang:token_usage gauge\n"
                + "sglang:token_usage" + labels + " " + kvUsage + "\n";
    }

    private void detokenize(HttpServerResponse response, JsonObject body) {
        detokenizeCalls.incrementAndGet();
        JsonArray tokens = body.getJsonArray("tokens");
        int[] ids = new int[tokens.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = tokens.getInteger(i);
            if (ids[i] < 0 || ids[i] >= vocabSize()) {
                error(response, 400, "Token id " + ids[i] + " is out of vocabulary");
                return;
            }
        }
        String text = decode(ids);
        json(
                response,
                200,
                kind == Kind.VLLM ? new JsonObject().put("prompt", text) : new JsonObject().put("text", text));
    }

    private void generate(HttpServerResponse response, JsonObject body) {
        received.add(body.copy());
        if (body.getValue("prompt") instanceof JsonArray prompt) {
            onPrompt.accept(
                    prompt.stream().mapToInt(t -> ((Number) t).intValue()).toArray());
        }
        response.closeHandler(v -> {
            if (!response.ended()) {
                closedEarly.incrementAndGet();
            }
        });
        switch (fault) {
            case BAD_REQUEST -> {
                error(response, 400, "This model's maximum context length is 2048 tokens (fake)");
                return;
            }
            case SERVER_ERROR -> {
                error(response, 500, "CUDA error: an illegal memory access was encountered (fake)");
                return;
            }
            case HANG -> {
                return;
            }
            default -> {}
        }
        if (kind == Kind.VLLM) {
            FakeVllm.answer(this, response, body);
        } else {
            FakeSglang.answer(this, response, body);
        }
    }

    static void error(HttpServerResponse response, int status, String message) {
        SimVllmProtocol.error(response, status, message);
    }

    static void json(HttpServerResponse response, int status, JsonObject body) {
        SimVllmProtocol.json(response, status, body);
    }

    static JsonArray ids(int[] ids) {
        return SimVllmProtocol.ids(ids);
    }

    int[] encode(String text, boolean addSpecial) {
        BpeTokenizer t = bpe;
        return t == null ? FakeVocabulary.encode(text, addSpecial) : t.encode(text, addSpecial);
    }

    int vocabSize() {
        BpeTokenizer t = bpe;
        return t == null ? FakeVocabulary.SIZE : t.vocabSize();
    }

    /** As vLLM's detokenizer: the tokens' bytes read as UTF-8, each incomplete character as U+FFFD. */
    String decode(int[] ids) {
        BpeTokenizer t = bpe;
        if (t == null) {
            return FakeVocabulary.decode(ids);
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int id : ids) {
            out.writeBytes(t.decode(-1, id));
        }
        return out.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** The tokens this decode instance generates for a limit. */
    int[] answerTokens(int maxTokens) {
        int[] all = encode(answerText, false);
        return java.util.Arrays.copyOf(all, Math.min(all.length, maxTokens));
    }

    /** The tokens a decode instance generates for a limit. */
    static int[] answer(int maxTokens) {
        int[] all = FakeVocabulary.encode(ANSWER, false);
        return java.util.Arrays.copyOf(all, Math.min(all.length, maxTokens));
    }

    /** Writes SSE events, then applies a mid-stream fault, one event per 5 ms (streams arrive in pieces). */
    void stream(HttpServerResponse response, List<String> events) {
        response.setChunked(true).putHeader("Content-Type", "text/event-stream").putHeader("Cache-Control", "no-cache");
        writeFrom(response, events, 0);
    }

    private void trickle(HttpServerResponse response) {
        if (response.closed() || response.ended()) {
            return;
        }
        response.write(": keep-alive\n\n");
        vertx.setTimer(50, t -> trickle(response));
    }

    private void writeFrom(HttpServerResponse response, List<String> events, int i) {
        Fault f = fault;
        if (f == Fault.MALFORMED_SSE && i == 1) {
            response.end("data: {\"id\": \"cmpl-broken\", \"choices\": [\n\n");
            return;
        }
        if (f == Fault.DIE_MID_STREAM && i == 2) {
            response.reset();
            return;
        }
        if (f == Fault.STALL_MID_STREAM && i == 1) {
            return;
        }
        if (f == Fault.TRICKLE && i == 1) {
            trickle(response);
            return;
        }
        if (i == events.size()) {
            response.end("data: [DONE]\n\n");
            return;
        }
        response.write("data: " + events.get(i) + "\n\n");
        vertx.setTimer(5, t -> writeFrom(response, events, i + 1));
    }
}
