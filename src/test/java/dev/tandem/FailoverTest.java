package dev.tandem;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.cluster.ClusterNames;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Workers that fail or die are replaced without the client noticing: a prefill worker that does not
 * answer is retried elsewhere; a decode worker whose cluster member dies mid-stream is replaced by
 * re-prefilling prompt + tokens already sent, and every stream still ends with exactly the tokens of
 * an undisturbed run. Separate nodes in one JVM; a member "dies" by terminating its Hazelcast
 * instance without a goodbye.
 */
class FailoverTest {
    private final List<TandemNode> nodes = new ArrayList<>();
    private TandemNode router;
    private TandemNode decodeA;
    private HttpTestClient http;

    @BeforeEach
    void start() {
        TandemConfig base = TestNodes.config();
        // A registry TTL longer than any wait below: a dead member's workers must go because the member left.
        TandemConfig config = base.withWorker(TestSettings.withHeartbeat(base.worker(), 250, 20_000));
        router = add(TandemNode.start(config, new TandemNode.Plan(true, List.of(), List.of())));
        add(TandemNode.start(config, new TandemNode.Plan(false, List.of("prefill-a", "prefill-b"), List.of())));
        decodeA = add(TandemNode.start(
                config,
                new TandemNode.Plan(false, List.of(), List.of("decode-a")),
                new PacedEngine(ReferenceEngine.builtin(16), 15)));
        add(TandemNode.start(
                config,
                new TandemNode.Plan(false, List.of(), List.of("decode-b")),
                new PacedEngine(ReferenceEngine.builtin(16), 15)));
        TestNodes.awaitWorkers(router.router(), 2, 2);
        http = new HttpTestClient(router.router().httpPort());
    }

    private TandemNode add(TandemNode node) {
        nodes.add(node);
        return node;
    }

    @AfterEach
    void stop() {
        for (int i = nodes.size() - 1; i >= 0; i--) {
            try {
                nodes.get(i).close().timeout(10, TimeUnit.SECONDS).await();
            } catch (RuntimeException e) {
                // a terminated member's node may not close cleanly; the test is over either way
            }
        }
    }

    private static JsonObject body(int i, int maxTokens) {
        return new JsonObject()
                .put("prompt", "failover " + i)
                .put("max_tokens", maxTokens)
                .put("stream", true)
                .put("temperature", 0.8)
                .put("seed", 500 + i);
    }

    private void assertExact(int i, int maxTokens, HttpResponse<String> response) {
        assertEquals(200, response.statusCode(), response.body());
        HttpTestClient.SseResult sse = HttpTestClient.parseSse(response.body());
        int[] prompt = router.engine().tokenizer().encode("failover " + i, true);
        LocalGenerator.Result expected = new LocalGenerator(router.engine())
                .generate(prompt, new SamplingParams(0.8, 1, 0, 500 + i), maxTokens, new int[0]);
        assertArrayEquals(expected.tokens(), sse.tokenIds(), "tokens of stream " + i);
        assertEquals(
                TestNodes.expectedText(router.engine(), prompt, expected.tokens()), sse.text(), "text of stream " + i);
        assertEquals(1, sse.doneCount());
    }

    @Test
    void aPrefillWorkerThatNeverAnswersIsRetriedElsewhere() {
        // A registered worker with nobody behind its address: every request sent there fails at once.
        WorkerDescriptor ghost = new WorkerDescriptor(
                "prefill-0-ghost",
                WorkerRole.PREFILL,
                router.engine().info().name(),
                router.engine().info().fingerprint(),
                router.cluster().nodeId(),
                1,
                false,
                dev.tandem.protocol.WorkerLoad.IDLE);
        router.cluster()
                .hazelcast()
                .<String, String>getMap(ClusterNames.WORKERS)
                .set(ghost.workerId(), WorkerDescriptor.CODEC.encode(ghost).encode());
        TestNodes.awaitWorkers(router.router(), 3, 2);
        Set<String> firstChoices = new HashSet<>();
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> r = http.post("/v1/completions", body(i, 10).encode());
            firstChoices.add(r.headers().firstValue("X-Tandem-Prefill-Worker").orElseThrow());
            assertExact(i, 10, r);
        }
        assertTrue(firstChoices.contains("prefill-0-ghost"), "the ghost was tried: " + firstChoices);
    }

    @Test
    void streamsOnADecodeWorkerThatDiesContinueElsewhereWithExactlyTheirTokens() throws Exception {
        int streams = 8;
        int maxTokens = 60;
        List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
            responses.add(http.postAsync("/v1/completions", body(i, maxTokens).encode()));
        }
        var affinityMap = router.cluster().hazelcast().<String, String>getMap(ClusterNames.AFFINITY);
        affinityMap.set("pinned-to-a", "decode-a");
        affinityMap.set("pinned-to-b", "decode-b");
        // 15 ms a step: after 300 ms every stream is well into its 60 tokens.
        Thread.sleep(300);
        decodeA.cluster().hazelcast().getLifecycleService().terminate();
        decodeA.vertx().close();
        Set<String> decodeWorkers = new HashSet<>();
        for (int i = 0; i < streams; i++) {
            HttpResponse<String> r = responses.get(i).join();
            decodeWorkers.add(r.headers().firstValue("X-Tandem-Decode-Worker").orElseThrow());
            assertExact(i, maxTokens, r);
        }
        assertTrue(
                decodeWorkers.contains("decode-a"), "some streams started on the worker that died: " + decodeWorkers);
        // Sessions pinned to the dead worker are released, so they are scheduled afresh.
        TestNodes.awaitTrue(
                () -> !affinityMap.containsKey("pinned-to-a") && "decode-b".equals(affinityMap.get("pinned-to-b")),
                Duration.ofSeconds(5),
                "affinity to the dead worker to be dropped, and only that");
        TestNodes.awaitTrue(
                () -> router.router().requests().activeRequests() == 0
                        && router.router().requests().loads().total() == 0,
                Duration.ofSeconds(5),
                "no load left behind");
    }
}
