package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The statuses that need a node in a particular state: 401, 429, 503 and 504, each with an OpenAI error body. */
class ErrorStatusTest {
    private static final String BODY = "{\"prompt\": \"hi\", \"max_tokens\": 4}";

    private static JsonObject error(HttpResponse<String> r, int status) {
        assertEquals(status, r.statusCode(), r.body());
        JsonObject error = new JsonObject(r.body()).getJsonObject("error");
        assertTrue(error.getString("message") != null && error.getString("type") != null, r.body());
        return error;
    }

    /** A seed whose generation for the prompt runs to all {@code tokens} (no early end-of-sequence). */
    private static long longRunningSeed(TandemNode node, String text, int tokens) {
        int[] prompt = node.engine().tokenizer().encode(text, true);
        for (long seed = 0; ; seed++) {
            var result = new dev.tandem.engine.LocalGenerator(node.engine())
                    .generate(prompt, new dev.tandem.engine.SamplingParams(1.0, 1.0, 0, seed), tokens, new int[0]);
            if (result.tokens().length == tokens) {
                return seed;
            }
        }
    }

    @Test
    void apiKeysGuardV1ButNotHealth() {
        TandemConfig config = TestNodes.config();
        config = config.withHttp(TestSettings.withApiKeys(config.http(), List.of("k-one", "k-two")));
        TandemNode node = TandemNode.start(config, TandemNode.Plan.embedded(1, 1));
        try {
            TestNodes.awaitWorkers(node.router(), 1, 1);
            HttpTestClient http = new HttpTestClient(node.router().httpPort());
            assertEquals(
                    "invalid_api_key",
                    error(http.post("/v1/completions", BODY), 401).getString("code"));
            HttpRequest.Builder wrong = http.request("/v1/completions")
                    .header("Authorization", "Bearer k-three")
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(BODY));
            error(http.send(wrong.build()), 401);
            error(
                    http.send(http.request("/v1/models")
                            .header("Authorization", "Bearer k-on")
                            .GET()
                            .build()),
                    401);
            HttpRequest.Builder right = http.request("/v1/completions")
                    .header("Authorization", "Bearer k-two")
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(BODY));
            assertEquals(200, http.send(right.build()).statusCode());
            assertEquals(200, http.send(http.request("/health").GET().build()).statusCode());
        } finally {
            node.close().await();
        }
    }

    @Test
    void overloadIsRefusedAtOnceWithRetryAfterAndEndsWhenLoadEnds() {
        TandemConfig config = TestNodes.config();
        config = TestSettings.withRouter(config, TestSettings.withMaxInFlight(config.router(), 2));
        TandemNode node = TandemNode.start(
                config, TandemNode.Plan.embedded(1, 1), new PacedEngine(ReferenceEngine.builtin(16), 20));
        try {
            TestNodes.awaitWorkers(node.router(), 1, 1);
            HttpTestClient http = new HttpTestClient(node.router().httpPort());
            String slow =
                    "{\"prompt\": \"slow\", \"max_tokens\": 40, \"seed\": " + longRunningSeed(node, "slow", 40) + "}";
            CompletableFuture<HttpResponse<String>> a = http.postAsync("/v1/completions", slow);
            CompletableFuture<HttpResponse<String>> b = http.postAsync("/v1/completions", slow);
            // Both past the router's queue: one waiting there gives its place back (flow control), and the
            // third would take it.
            TestNodes.awaitTrue(
                    () -> node.router().requests().activeRequests() == 2
                            && node.router().requests().queued() == 0,
                    Duration.ofSeconds(5),
                    "two in flight, none queued");
            HttpResponse<String> refused = http.post("/v1/completions", BODY);
            assertEquals("overloaded", error(refused, 429).getString("code"));
            assertEquals("1", refused.headers().firstValue("Retry-After").orElse(null));
            assertEquals(200, a.join().statusCode());
            assertEquals(200, b.join().statusCode());
            assertEquals(200, http.post("/v1/completions", BODY).statusCode());
        } finally {
            node.close().await();
        }
    }

    @Test
    void noWorkersIsA503AtOnceAndATimeoutIsA504ThatFreesEverything() {
        TandemConfig config = TestNodes.config();
        config = TestSettings.withRouter(config, TestSettings.withRequestTimeoutMs(config.router(), 300));
        TandemNode router = TandemNode.start(config, new TandemNode.Plan(true, List.of(), List.of()));
        TandemNode workers = null;
        try {
            HttpTestClient http = new HttpTestClient(router.router().httpPort());
            long start = System.nanoTime();
            assertEquals(
                    "no_decode_workers",
                    error(http.post("/v1/completions", BODY), 503).getString("code"));
            assertTrue(System.nanoTime() - start < Duration.ofSeconds(2).toNanos(), "503 came at once");

            workers = TandemNode.start(
                    config,
                    new TandemNode.Plan(false, List.of("prefill-1"), List.of("decode-1")),
                    new PacedEngine(ReferenceEngine.builtin(16), 20));
            TestNodes.awaitWorkers(router.router(), 1, 1);
            // 200 tokens at 20 ms a step cannot finish within the 300 ms request timeout — given a seed whose
            // generation really runs to 200 tokens (an early end-of-sequence would finish in time).
            long seed = longRunningSeed(router, "hi", 200);
            assertEquals(
                    "request_timeout",
                    error(
                                    http.post(
                                            "/v1/completions",
                                            "{\"prompt\": \"hi\", \"max_tokens\": 200, \"seed\": " + seed + "}"),
                                    504)
                            .getString("code"));
            TandemNode w = workers;
            TestNodes.awaitTrue(
                    () -> EmbeddedServingTest.status(w, "decode-1").activeSequences() == 0
                            && EmbeddedServingTest.status(w, "decode-1").kvBytesUsed() == 0
                            && router.router().requests().activeRequests() == 0
                            && router.router().requests().loads().total() == 0,
                    Duration.ofSeconds(2),
                    "the timed-out request to be released everywhere");
        } finally {
            if (workers != null) {
                workers.close().await();
            }
            router.close().await();
        }
    }
}
