package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.bridge.BridgeTestClient;
import dev.tandem.config.TandemConfig;
import dev.tandem.engine.Engine;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.ModelConfig;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.reference.ModelWeights;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.engine.tokenizer.ChatMessage;
import dev.tandem.engine.tokenizer.TestTokenizers;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Two models in one cluster behind a router that loaded neither: the built-in model's workers on one
 * node, a llama2.c-vocabulary model's on another (its tokenizer reaches the router through the
 * cluster's store). Every entry point — HTTP, SSE, the WebSocket and the TCP bridge — routes by
 * {@code model}, each model's answers are exactly what its engine computes alone, and when one model's
 * workers leave only that model goes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MultiModelServingTest {
    private static final String STORIES = "stories";

    private TandemConfig config;
    private TandemNode router;
    private TandemNode builtinWorkers;
    private TandemNode storiesWorkers;
    private Engine builtin;
    private Engine stories;
    private HttpTestClient http;

    @BeforeAll
    void start() {
        config = TestNodes.config();
        int blockSize = config.worker().kvBlockSize();
        builtin = ReferenceEngine.builtin(blockSize);
        var storiesTokenizer = TestTokenizers.llama2c();
        stories = ReferenceEngine.create(
                STORIES,
                ModelWeights.random(
                        new ModelConfig(48, 96, 2, 4, 2, storiesTokenizer.vocabSize(), 192, false), 20261203L),
                storiesTokenizer,
                blockSize);
        // The router is a node of its own, with the TCP bridge; it loads only the built-in model (its default).
        router = TandemNode.start(
                config.withBridge(config.bridge().withTcpPort(0)), new TandemNode.Plan(true, List.of(), List.of()));
        builtinWorkers = TandemNode.start(
                config, new TandemNode.Plan(false, List.of("prefill-b"), List.of("decode-b")), builtin);
        storiesWorkers = TandemNode.start(
                config, new TandemNode.Plan(false, List.of("prefill-s"), List.of("decode-s")), stories);
        http = new HttpTestClient(router.router().httpPort());
        awaitModels(List.of(STORIES, "tandem-builtin"));
    }

    @AfterAll
    void stop() {
        for (TandemNode n : new TandemNode[] {storiesWorkers, builtinWorkers, router}) {
            if (n != null) {
                n.close().await();
            }
        }
    }

    private void awaitModels(List<String> expected) {
        TestNodes.awaitTrue(() -> http.modelIds().equals(expected), "/v1/models to list " + expected);
    }

    private static JsonObject completion(String model, String prompt, int maxTokens, long seed) {
        JsonObject body = new JsonObject()
                .put("prompt", prompt)
                .put("max_tokens", maxTokens)
                .put("temperature", 0.8)
                .put("seed", seed);
        return model == null ? body : body.put("model", model);
    }

    private static LocalGenerator.Result alone(Engine engine, int[] prompt, int maxTokens, long seed) {
        return new LocalGenerator(engine)
                .generate(prompt, new SamplingParams(0.8, 1.0, 0, seed), maxTokens, new int[0]);
    }

    private static int[] ids(JsonArray array) {
        return array.stream().mapToInt(x -> (Integer) x).toArray();
    }

    @Test
    @Order(1)
    void eachModelAnswersExactlyAsItsEngineAlone() {
        for (Engine engine : List.of(builtin, stories)) {
            String name = engine.info().name();
            HttpResponse<String> r = http.post(
                    "/v1/completions",
                    completion(name, "Once upon a time there", 20, 5).encode());
            assertEquals(200, r.statusCode(), r.body());
            JsonObject answer = new JsonObject(r.body());
            assertEquals(name, answer.getString("model"));
            int[] prompt = engine.tokenizer().encode("Once upon a time there", true);
            LocalGenerator.Result expected = alone(engine, prompt, 20, 5);
            JsonObject choice = answer.getJsonArray("choices").getJsonObject(0);
            assertArrayEquals(expected.tokens(), ids(choice.getJsonArray("token_ids")), name);
            assertEquals(TestNodes.expectedText(engine, prompt, expected.tokens()), choice.getString("text"), name);
            assertEquals(prompt.length, answer.getJsonObject("usage").getInteger("prompt_tokens"), name);
        }
    }

    @Test
    @Order(2)
    void chatUsesTheNamedModelsTemplateAndTokenizer() {
        JsonObject body = new JsonObject()
                .put("model", STORIES)
                .put(
                        "messages",
                        new JsonArray().add(new JsonObject().put("role", "user").put("content", "Tell me")))
                .put("max_tokens", 12)
                .put("temperature", 0.8)
                .put("seed", 9);
        HttpResponse<String> r = http.post("/v1/chat/completions", body.encode());
        assertEquals(200, r.statusCode(), r.body());
        JsonObject choice = new JsonObject(r.body()).getJsonArray("choices").getJsonObject(0);
        int[] prompt = stories.tokenizer()
                .encode(stories.chatTemplate().render(List.of(new ChatMessage("user", "Tell me"))), true);
        assertEquals("llama2", stories.chatTemplate().name());
        int[] expected = alone(stories, prompt, 12, 9).tokens();
        assertArrayEquals(expected, ids(choice.getJsonArray("token_ids")));
        assertEquals(
                TestNodes.expectedText(stories, prompt, expected),
                choice.getJsonObject("message").getString("content"));
    }

    @Test
    @Order(3)
    void theWebSocketAndTheTcpBridgeTakeModelTheSameWay() throws Exception {
        int[] prompt = stories.tokenizer().encode("The end", true);
        int[] expected = alone(stories, prompt, 10, 3).tokens();
        try (WebSocketTestClient ws =
                WebSocketTestClient.connect(router.router().httpPort())) {
            ws.send(completion(STORIES, "The end", 10, 3).put("id", "s").encode());
            ws.send(completion("nope", "The end", 10, 3).put("id", "n").encode());
            Map<String, WebSocketTestClient.Result> results = ws.collect(Set.of("s", "n"));
            assertArrayEquals(expected, results.get("s").tokenIds());
            JsonObject error = results.get("n").last();
            assertEquals(404, error.getInteger("status"), error.encode());
            assertEquals("model_not_found", error.getJsonObject("error").getString("code"), error.encode());
        }
        try (BridgeTestClient c =
                BridgeTestClient.connect(router.router().bridge().tcpPort())) {
            c.registerOwnAddress();
            JsonObject reply = c.request(
                    Addresses.GENERATE, completion(STORIES, "The end", 10, 3).put("stream_to", c.address));
            assertEquals("message", reply.getString("type"), reply.encode());
            String id = reply.getJsonObject("body").getString("id");
            assertTrue(reply.getJsonObject("body").getString("decode_worker").equals("decode-s"), reply.encode());
            assertArrayEquals(expected, c.collect(id).tokenIds());
            JsonObject refused = c.request(
                    Addresses.GENERATE, completion(null, "The end", 10, 3).put("stream_to", c.address));
            assertTrue(refused.encode().contains("model"), refused.encode());
            assertTrue(refused.encode().contains("400"), refused.encode());
        }
    }

    @Test
    @Order(4)
    void withoutAModelOrWithAnUnknownOneTheCallerIsToldWhich() {
        HttpResponse<String> none =
                http.post("/v1/completions", completion(null, "hi", 4, 1).encode());
        assertEquals(400, none.statusCode(), none.body());
        JsonObject error = new JsonObject(none.body()).getJsonObject("error");
        assertEquals("model", error.getString("param"));
        assertTrue(error.getString("message").contains(STORIES), error.encode());
        HttpResponse<String> unknown =
                http.post("/v1/completions", completion("gpt-4o", "hi", 4, 1).encode());
        assertEquals(404, unknown.statusCode(), unknown.body());
        assertEquals(
                "model_not_found",
                new JsonObject(unknown.body()).getJsonObject("error").getString("code"));
    }

    @Test
    @Order(5)
    void modelsListEachWithItsContextLength() {
        HttpResponse<String> r =
                http.send(http.request("/v1/models/" + STORIES).GET().build());
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(192, new JsonObject(r.body()).getInteger("context_length"));
        HttpResponse<String> b =
                http.send(http.request("/v1/models/tandem-builtin").GET().build());
        assertEquals(builtin.info().config().seqLen(), new JsonObject(b.body()).getInteger("context_length"));
    }

    @Test
    @Order(10)
    void whenOneModelsWorkersLeaveOnlyThatModelGoes() {
        storiesWorkers.close().await();
        storiesWorkers = null;
        awaitModels(List.of("tandem-builtin"));
        HttpResponse<String> gone =
                http.post("/v1/completions", completion(STORIES, "hi", 4, 1).encode());
        assertEquals(503, gone.statusCode(), gone.body());
        // One model left: a request naming none goes to it.
        HttpResponse<String> r =
                http.post("/v1/completions", completion(null, "hi", 4, 1).encode());
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("tandem-builtin", new JsonObject(r.body()).getString("model"));
    }
}
