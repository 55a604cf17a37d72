package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Workers bound their queues: a full decode worker (batch plus waiting sequences) or a full prefill
 * queue turns requests away, the router tries the other workers, and when none has room the client
 * gets a 429 with Retry-After — while the admitted requests finish exactly and nothing is left held.
 */
class AdmissionTest {
    private static final int CONCURRENT = 8;

    @Test
    void aFullDecodeWorkerMakesTheSurplusA429() {
        TandemConfig base = TestNodes.config();
        // Two sequences at most on the only decode worker, and no room in the router's queue: the surplus is
        // refused at once (queue_full), nobody is sent to the full worker.
        TandemConfig config = base.withWorker(TestSettings.withQueueLimits(base.worker(), 2, 0, 65_536))
                .withFlowControl(TandemConfig.fromJson(
                                new JsonObject().put("flow-control", new JsonObject().put("max-queued-per-tenant", 0)))
                        .flowControl());
        runOverload(config, new PacedEngine(ReferenceEngine.builtin(16), 20), 40, "queue_full");
    }

    @Test
    void aFullDecodeWorkerQueuesTheSurplusInTheRouter() {
        TandemConfig base = TestNodes.config();
        // The same load with the router's queue on (the default): the surplus waits for a batch slot and every
        // request is served, exactly.
        TandemConfig config = base.withWorker(TestSettings.withQueueLimits(base.worker(), 2, 0, 65_536));
        runOverload(config, new PacedEngine(ReferenceEngine.builtin(16), 20), 40, null);
    }

    @Test
    void aFullPrefillQueueMakesTheSurplusA429() {
        TandemConfig base = TestNodes.config();
        // One prompt queued at a time on the only prefill worker, and each takes ~100 ms; the router's queue is set
        // never to hold a request back, so the worker's own bound is what refuses (and the router retries, then 429s).
        TandemConfig config = base.withWorker(TestSettings.withQueueLimits(base.worker(), 64, 64, 12))
                .withFlowControl(TandemConfig.fromJson(new JsonObject()
                                .put(
                                        "flow-control",
                                        new JsonObject()
                                                .put("max-queued-prefill-ms", 0)
                                                .put("max-queued-prefill-tokens", 1L << 40)))
                        .flowControl());
        runOverload(config, new PacedEngine(ReferenceEngine.builtin(16), 0, 10_000), 4, "workers_at_capacity");
    }

    /** @param refusal the code the surplus is refused with; null: nothing may be refused */
    private void runOverload(TandemConfig config, dev.tandem.engine.Engine engine, int maxTokens, String refusal) {
        TandemNode node = TandemNode.start(config, TandemNode.Plan.embedded(1, 1), engine);
        try {
            TestNodes.awaitWorkers(node.router(), 1, 1);
            HttpTestClient http = new HttpTestClient(node.router().httpPort());
            List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
            for (int i = 0; i < CONCURRENT; i++) {
                calls.add(http.postAsync("/v1/completions", body(i, maxTokens)));
            }
            int ok = 0;
            int refused = 0;
            for (int i = 0; i < CONCURRENT; i++) {
                HttpResponse<String> r = calls.get(i).get(30, TimeUnit.SECONDS);
                if (r.statusCode() == 200) {
                    ok++;
                    assertArrayEquals(expected(node, i, maxTokens), HttpTestClient.tokenIds(r), "request " + i);
                } else {
                    refused++;
                    assertEquals(429, r.statusCode(), r.body());
                    assertEquals(
                            refusal,
                            new JsonObject(r.body()).getJsonObject("error").getString("code"));
                    assertEquals("1", r.headers().firstValue("Retry-After").orElse(null));
                }
            }
            assertTrue(
                    refusal == null ? ok == CONCURRENT : ok >= 1 && refused >= 1,
                    ok + " served, " + refused + " refused");
            // Once the load is gone, the server serves normally and holds nothing.
            HttpResponse<String> after = http.post("/v1/completions", body(100, maxTokens));
            assertEquals(200, after.statusCode(), after.body());
            assertArrayEquals(expected(node, 100, maxTokens), HttpTestClient.tokenIds(after));
            TestNodes.awaitTrue(
                    () -> node.router().requests().loads().total() == 0
                            && node.decodeWorkers().get(0).descriptor().load().activeSequences() == 0
                            && node.decodeWorkers().get(0).descriptor().load().kvBytesUsed() == 0
                            && node.prefillWorkers().get(0).descriptor().load().prefilling() == 0,
                    Duration.ofSeconds(5),
                    "nothing held after the overload");
        } catch (Exception e) {
            throw new AssertionError(e);
        } finally {
            node.close().await();
        }
    }

    private static String body(int i, int maxTokens) {
        return new JsonObject()
                .put("prompt", "queue " + i)
                .put("max_tokens", maxTokens)
                .put("temperature", 0.8)
                .put("seed", i)
                .encode();
    }

    private static int[] expected(TandemNode node, int i, int maxTokens) {
        int[] prompt = node.engine().tokenizer().encode("queue " + i, true);
        return new LocalGenerator(node.engine())
                .generate(prompt, new SamplingParams(0.8, 1, 0, i), maxTokens, new int[0])
                .tokens();
    }
}
