package dev.tandem;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.config.TandemConfig;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.SamplingParams;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Four clustered Vert.x nodes in one JVM — a router, two prefill workers, one decode worker — on
 * loopback with a random cluster name. Every message between them crosses the clustered event bus.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusteredServingTest {
    private final List<TandemNode> nodes = new ArrayList<>();
    private TandemNode router;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        router = TandemNode.start(config, new TandemNode.Plan(true, List.of(), List.of()));
        nodes.add(router);
        nodes.add(TandemNode.start(config, new TandemNode.Plan(false, List.of("prefill-a"), List.of())));
        nodes.add(TandemNode.start(config, new TandemNode.Plan(false, List.of("prefill-b"), List.of())));
        nodes.add(TandemNode.start(config, new TandemNode.Plan(false, List.of(), List.of("decode-a"))));
        TestNodes.awaitWorkers(router.router(), 2, 1);
        assertEquals(4, router.cluster().hazelcast().getCluster().getMembers().size());
    }

    @AfterAll
    void stop() {
        for (int i = nodes.size() - 1; i >= 0; i--) {
            nodes.get(i).close().await();
        }
    }

    @Test
    void thirtyTwoConcurrentStreamsEachGetExactlyTheirTokens() {
        HttpTestClient http = new HttpTestClient(router.router().httpPort());
        int n = 32;
        List<String> prompts = new ArrayList<>();
        List<SamplingParams> samplings = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String prompt = "Request " + i + (i % 3 == 0 ? " with a somewhat longer prompt to cross KV blocks" : "");
            SamplingParams sampling =
                    i % 4 == 0 ? new SamplingParams(0, 1, 0, 0) : new SamplingParams(0.9, 0.95, 0, 1000 + i);
            prompts.add(prompt);
            samplings.add(sampling);
            responses.add(http.postAsync(
                    "/v1/completions",
                    new JsonObject()
                            .put("prompt", prompt)
                            .put("max_tokens", 12 + i % 9)
                            .put("stream", true)
                            .put("temperature", sampling.temperature())
                            .put("top_p", sampling.topP())
                            .put("seed", sampling.seed())
                            .encode()));
        }
        Set<String> prefillWorkers = new HashSet<>();
        LocalGenerator local = new LocalGenerator(router.engine());
        for (int i = 0; i < n; i++) {
            HttpResponse<String> response = responses.get(i).join();
            assertEquals(200, response.statusCode(), response.body());
            prefillWorkers.add(
                    response.headers().firstValue("X-Tandem-Prefill-Worker").orElseThrow());
            HttpTestClient.SseResult sse = HttpTestClient.parseSse(response.body());
            int[] prompt = router.engine().tokenizer().encode(prompts.get(i), true);
            LocalGenerator.Result expected = local.generate(prompt, samplings.get(i), 12 + i % 9, new int[0]);
            assertArrayEquals(expected.tokens(), sse.tokenIds(), "tokens of request " + i);
            assertEquals(
                    TestNodes.expectedText(router.engine(), prompt, expected.tokens()),
                    sse.text(),
                    "text of request " + i);
            assertEquals(expected.finishReason(), sse.finishReason());
            assertEquals(1, sse.doneCount(), "one [DONE] for request " + i);
            assertEquals("[DONE]", sse.payloads().get(sse.payloads().size() - 1));
        }
        assertEquals(Set.of("prefill-a", "prefill-b"), prefillWorkers);
    }
}
