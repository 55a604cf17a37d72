package dev.tandem;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.TandemConfig;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A node told to shut down (SIGTERM) lets its running streams finish: the router turns unready and
 * refuses new requests with a 503, the workers report draining, the stream ends exactly, and only
 * then does the node leave.
 */
class GracefulShutdownTest {

    @Test
    void runningStreamsFinishAndNewRequestsAreRefused() throws Exception {
        TandemConfig config = TestNodes.config();
        ReferenceEngine reference = ReferenceEngine.builtin(16);
        TandemNode node = TandemNode.start(config, TandemNode.Plan.embedded(1, 1), new PacedEngine(reference, 10));
        TestNodes.awaitWorkers(node.router(), 1, 1);
        HttpTestClient http = new HttpTestClient(node.router().httpPort());
        int[] prompt = reference.tokenizer().encode("Before the end", true);
        int[] expected = new LocalGenerator(reference)
                .generate(prompt, new SamplingParams(0.7, 1, 0, 3), 150, new int[0])
                .tokens();
        CompletableFuture<HttpResponse<String>> running = http.postAsync(
                "/v1/completions",
                new JsonObject()
                        .put("prompt", "Before the end")
                        .put("max_tokens", 150)
                        .put("temperature", 0.7)
                        .put("seed", 3)
                        .encode());
        TestNodes.awaitTrue(
                () -> node.decodeWorkers().get(0).descriptor().load().activeSequences() == 1,
                Duration.ofSeconds(10),
                "the stream to be decoding");

        Future<Void> shutdown = node.shutdown(20_000);
        TestNodes.awaitTrue(
                () -> http.send(http.request("/ready").GET().build()).statusCode() == 503,
                Duration.ofSeconds(5),
                "the router to report unready");
        TestNodes.awaitTrue(
                () -> node.router().directory().get("decode-1").draining()
                        && node.router().directory().get("prefill-1").draining(),
                Duration.ofSeconds(5),
                "the workers to drain");
        HttpResponse<String> refused = http.post("/v1/completions", "{\"prompt\": \"too late\", \"max_tokens\": 2}");
        assertEquals(503, refused.statusCode(), refused.body());
        assertEquals(
                "shutting_down",
                new JsonObject(refused.body()).getJsonObject("error").getString("code"));
        assertTrue(!shutdown.isComplete(), "the node waits for its stream");

        HttpResponse<String> done = running.get(30, TimeUnit.SECONDS);
        assertEquals(200, done.statusCode(), done.body());
        assertArrayEquals(expected, HttpTestClient.tokenIds(done));
        shutdown.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
}
