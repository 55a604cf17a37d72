package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.ForwardingEngine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * A decode worker that stays registered but stops producing tokens (hung compute) loses its streams to
 * another worker after the stall timeout; the client sees one uninterrupted, exact stream.
 */
class DecodeStallTest {

    /** Decode steps hang until released: a worker alive in the registry that makes no progress. */
    private static final class HungEngine extends ForwardingEngine {
        private final CountDownLatch release = new CountDownLatch(1);

        HungEngine(Engine delegate) {
            super(delegate);
        }

        @Override
        public float[][] decodeStep(List<KvCache> caches, int[] tokens) {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return delegate.decodeStep(caches, tokens);
        }
    }

    @Test
    void aStalledDecodeWorkerLosesItsStreamToAnother() throws Exception {
        TandemConfig base = TestNodes.config();
        TandemConfig config = TestSettings.withRouter(base, TestSettings.withDecodeStallTimeoutMs(base.router(), 500));
        ReferenceEngine reference = ReferenceEngine.builtin(16);
        HungEngine hung = new HungEngine(reference);
        TandemNode router = TandemNode.start(
                config, new TandemNode.Plan(true, List.of("prefill-1"), List.of("decode-z")), reference);
        // Sorted first by id, so the round-robin offers it first.
        TandemNode stuck = TandemNode.start(config, new TandemNode.Plan(false, List.of(), List.of("decode-a")), hung);
        try {
            TestNodes.awaitWorkers(router.router(), 1, 2);
            HttpTestClient http = new HttpTestClient(router.router().httpPort());
            boolean sawStall = false;
            for (int i = 0; i < 4 && !sawStall; i++) {
                long start = System.nanoTime();
                HttpResponse<String> r = http.post(
                        "/v1/completions",
                        new JsonObject()
                                .put("prompt", "stall " + i)
                                .put("max_tokens", 12)
                                .put("temperature", 0.7)
                                .put("seed", i)
                                .encode());
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertEquals(200, r.statusCode(), r.body());
                int[] prompt = reference.tokenizer().encode("stall " + i, true);
                int[] expected = new LocalGenerator(reference)
                        .generate(prompt, new SamplingParams(0.7, 1, 0, i), 12, new int[0])
                        .tokens();
                assertArrayEquals(expected, HttpTestClient.tokenIds(r), "request " + i);
                if ("decode-a"
                        .equals(r.headers().firstValue("X-Tandem-Decode-Worker").orElse(null))) {
                    sawStall = true;
                    assertTrue(ms >= 500, "moved only after the stall timeout, took " + ms + " ms");
                }
            }
            assertTrue(sawStall, "no request was first sent to the hung worker");
            assertEquals(0, router.router().requests().loads().total());
        } finally {
            hung.release.countDown();
            stuck.close().await();
            router.close().await();
        }
    }

    /**
     * A request waiting for a batch slot on a busy worker gets no token for longer than the stall
     * timeout, yet is not moved: the worker's decode steps go on. (With one decode worker, moving it
     * would fail the request.)
     */
    @Test
    void aRequestQueuedOnABusyWorkerIsNotMoved() throws Exception {
        TandemConfig base = TestNodes.config();
        TandemConfig config = TestSettings.withRouter(base, TestSettings.withDecodeStallTimeoutMs(base.router(), 1000))
                .withWorker(TestSettings.withHeartbeat(
                        TestSettings.withQueueLimits(base.worker(), 1, 4, 65_536), 100, 3000));
        ReferenceEngine reference = ReferenceEngine.builtin(16);
        TandemNode node = TandemNode.start(config, TandemNode.Plan.embedded(1, 1), new PacedEngine(reference, 20));
        try {
            TestNodes.awaitWorkers(node.router(), 1, 1);
            HttpTestClient http = new HttpTestClient(node.router().httpPort());
            // Two generations that run their full 100 tokens (2 s each at 20 ms a step), one batch slot.
            List<Integer> seeds = new java.util.ArrayList<>();
            for (int seed = 0; seeds.size() < 2; seed++) {
                int[] prompt = reference.tokenizer().encode("queued " + seed, true);
                if (new LocalGenerator(reference)
                                .generate(prompt, new SamplingParams(0.7, 1, 0, seed), 100, new int[0])
                                .tokens()
                                .length
                        == 100) {
                    seeds.add(seed);
                }
            }
            List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> calls = new java.util.ArrayList<>();
            for (int seed : seeds) {
                calls.add(http.postAsync(
                        "/v1/completions",
                        new JsonObject()
                                .put("prompt", "queued " + seed)
                                .put("max_tokens", 100)
                                .put("temperature", 0.7)
                                .put("seed", seed)
                                .encode()));
            }
            for (int i = 0; i < calls.size(); i++) {
                HttpResponse<String> r = calls.get(i).get(30, java.util.concurrent.TimeUnit.SECONDS);
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(100, HttpTestClient.tokenIds(r).length);
            }
            String scrape = http.send(http.request("/metrics").GET().build()).body();
            assertTrue(scrape.contains("tandem_request_failovers_total 0.0"), "no request was moved");
        } finally {
            node.close().await();
        }
    }
}
