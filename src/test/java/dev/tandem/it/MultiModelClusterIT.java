package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.engine.Engine;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.ModelConfig;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.reference.Llama2cCheckpointWriter;
import dev.tandem.engine.reference.ModelWeights;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.engine.tokenizer.TestTokenizers;
import dev.tandem.it.TandemCluster.Node;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * Two models in one cluster of separate JVMs: workers of the built-in model, workers of a llama2.c
 * checkpoint (with a tokenizer of its own, both written here), and a router started without
 * {@code --model}. Each model answers exactly as its engine alone; {@code /v1/models} lists both; a
 * request naming neither gets 404, one naming none 400; and when the checkpoint's workers are killed,
 * their model answers 503 and leaves {@code /v1/models} within the registry TTL while the other serves on.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MultiModelClusterIT extends ClusterIT {
    private static final long REGISTRY_TTL_MS = 3000;
    private static final String STORIES = "stories";

    private TandemProcess router;
    private TandemProcess storiesPrefill;
    private TandemProcess storiesDecode;
    private Engine stories;
    private HttpTestClient http;

    @BeforeAll
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void start() throws IOException {
        cluster = new TandemCluster(
                MultiModelClusterIT.class,
                Map.of("worker.heartbeat-ms", 200, "worker.registry-ttl-ms", REGISTRY_TTL_MS));
        Path dir = cluster.configFile().getParent();
        Path checkpoint = dir.resolve(STORIES + ".bin");
        Path tokenizer = dir.resolve("stories-tokenizer.bin");
        var vocabulary = TestTokenizers.llama2c();
        Llama2cCheckpointWriter.write(
                checkpoint,
                ModelWeights.random(new ModelConfig(48, 96, 2, 4, 2, vocabulary.vocabSize(), 192, false), 1203L));
        Files.write(tokenizer, TestTokenizers.llama2cImage());
        // The engine a single-model cluster of that checkpoint would run: the reference for its answers.
        stories = ReferenceEngine.load(checkpoint, tokenizer, 16);
        String[] model = {"--model", checkpoint.toString(), "--tokenizer", tokenizer.toString()};
        // The built-in prefill worker is the seed (never killed); the router names no model.
        List<TandemProcess> nodes = cluster.start(
                Node.prefill("prefill-builtin"),
                Node.decode("decode-builtin"),
                Node.prefill("prefill-stories").with(model),
                Node.decode("decode-stories").with(model),
                Node.router("router"));
        storiesPrefill = nodes.get(2);
        storiesDecode = nodes.get(3);
        router = nodes.get(4);
        http = cluster.http(router);
        cluster.awaitWorkers(router, 2, 2);
        TestNodes.awaitTrue(
                () -> http.modelIds().equals(List.of(STORIES, "tandem-builtin")),
                Duration.ofSeconds(30),
                "/v1/models to list both models");
    }

    private HttpResponse<String> complete(String model, String prompt, int maxTokens, long seed) {
        JsonObject body = new JsonObject()
                .put("prompt", prompt)
                .put("max_tokens", maxTokens)
                .put("temperature", 0.8)
                .put("top_p", 0.95)
                .put("seed", seed);
        if (model != null) {
            body.put("model", model);
        }
        return http.post("/v1/completions", body.encode());
    }

    private static int[] alone(Engine engine, String prompt, int maxTokens, long seed) {
        return new LocalGenerator(engine)
                .generate(
                        engine.tokenizer().encode(prompt, true),
                        new SamplingParams(0.8, 0.95, 0, seed),
                        maxTokens,
                        new int[0])
                .tokens();
    }

    private static int[] ids(HttpResponse<String> r) {
        JsonArray ids = new JsonObject(r.body())
                .getJsonArray("choices")
                .getJsonObject(0)
                .getJsonArray("token_ids");
        return ids.stream().mapToInt(x -> (Integer) x).toArray();
    }

    @Test
    @Order(1)
    void eachModelAnswersExactlyAsItsEngineAloneOnItsOwnWorkers() {
        for (int i = 0; i < 4; i++) {
            for (Engine engine : List.of(Completion.ENGINE, stories)) {
                String name = engine.info().name();
                String prompt = "Once upon a time " + i;
                HttpResponse<String> r = complete(name, prompt, 24, 40 + i);
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(name, new JsonObject(r.body()).getString("model"));
                assertArrayEquals(alone(engine, prompt, 24, 40 + i), ids(r), name + " request " + i);
                String suffix = name.equals(STORIES) ? "-stories" : "-builtin";
                assertTrue(
                        r.headers()
                                .firstValue("X-Tandem-Prefill-Worker")
                                .orElse("")
                                .endsWith(suffix),
                        name);
                assertTrue(
                        r.headers()
                                .firstValue("X-Tandem-Decode-Worker")
                                .orElse("")
                                .endsWith(suffix),
                        name);
            }
        }
    }

    @Test
    @Order(2)
    void aRequestNamingNeitherModelIs404AndOneNamingNoneIs400() {
        HttpResponse<String> unknown = complete("llama-3-70b", "hi", 4, 1);
        assertEquals(404, unknown.statusCode(), unknown.body());
        assertEquals(
                "model_not_found",
                new JsonObject(unknown.body()).getJsonObject("error").getString("code"));
        HttpResponse<String> none = complete(null, "hi", 4, 1);
        assertEquals(400, none.statusCode(), none.body());
        assertEquals("model", new JsonObject(none.body()).getJsonObject("error").getString("param"));
    }

    @Test
    @Order(3)
    void killedWorkersTakeTheirModelAwayWithinTheRegistryTtl() {
        long killed = System.nanoTime();
        storiesPrefill.kill9();
        storiesDecode.kill9();
        TestNodes.awaitTrue(
                () -> http.modelIds().equals(List.of("tandem-builtin")),
                Duration.ofMillis(REGISTRY_TTL_MS + 2000),
                "the killed model to leave /v1/models");
        System.out.printf(
                "[MultiModelClusterIT] %s left /v1/models %d ms after SIGKILL (registry TTL %d ms)%n",
                STORIES, (System.nanoTime() - killed) / 1_000_000, REGISTRY_TTL_MS);
        HttpResponse<String> gone = complete(STORIES, "hi", 4, 1);
        assertEquals(503, gone.statusCode(), gone.body());
        // The listing drops the model when either role is gone; the model itself goes with its last worker
        // (the two JVMs' departures are noticed one after the other), then it is no longer a candidate.
        TestNodes.awaitTrue(
                () -> complete(null, "hi", 4, 1).statusCode() == 200,
                Duration.ofMillis(REGISTRY_TTL_MS + 2000),
                "the remaining model to be the default");
        HttpResponse<String> builtin = complete("tandem-builtin", "Still here", 16, 3);
        assertEquals(200, builtin.statusCode(), builtin.body());
        assertArrayEquals(alone(Completion.ENGINE, "Still here", 16, 3), ids(builtin));
        HttpResponse<String> stillGone = complete(STORIES, "hi", 4, 1);
        assertEquals(503, stillGone.statusCode(), stillGone.body());
        assertEquals(
                "model_unavailable",
                new JsonObject(stillGone.body()).getJsonObject("error").getString("code"),
                "a model served before is unavailable, not unknown");
    }
}
