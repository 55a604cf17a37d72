package dev.tandem.worker.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.SamplingParams;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** A decode worker with no room for a request's KV says so, and the router takes the request elsewhere. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DecodeCapacityTest {
    private final List<TandemNode> nodes = new ArrayList<>();
    private TandemNode router;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        router = TandemNode.start(config, new TandemNode.Plan(true, List.of("prefill-1"), List.of()));
        nodes.add(router);
        // Capacity 0: this worker is always full.
        nodes.add(TandemNode.start(
                config.withWorker(config.worker().withKvCapacityBytes(0)),
                new TandemNode.Plan(false, List.of(), List.of("decode-full"))));
        nodes.add(TandemNode.start(config, new TandemNode.Plan(false, List.of(), List.of("decode-roomy"))));
        TestNodes.awaitWorkers(router.router(), 1, 2);
    }

    @AfterAll
    void stop() {
        for (int i = nodes.size() - 1; i >= 0; i--) {
            nodes.get(i).close().await();
        }
    }

    @Test
    void aFullDecodeWorkerIsPassedOverWithoutTheClientNoticing() {
        HttpTestClient http = new HttpTestClient(router.router().httpPort());
        Set<String> firstChoices = new HashSet<>();
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> r = http.post(
                    "/v1/completions",
                    new JsonObject()
                            .put("prompt", "room " + i)
                            .put("max_tokens", 8)
                            .put("temperature", 0.5)
                            .put("seed", i)
                            .encode());
            assertEquals(200, r.statusCode(), r.body());
            firstChoices.add(r.headers().firstValue("X-Tandem-Decode-Worker").orElseThrow());
            JsonArray ids = new JsonObject(r.body())
                    .getJsonArray("choices")
                    .getJsonObject(0)
                    .getJsonArray("token_ids");
            int[] prompt = router.engine().tokenizer().encode("room " + i, true);
            int[] expected = new LocalGenerator(router.engine())
                    .generate(prompt, new SamplingParams(0.5, 1, 0, i), 8, new int[0])
                    .tokens();
            int[] got = new int[ids.size()];
            for (int k = 0; k < got.length; k++) {
                got[k] = ids.getInteger(k);
            }
            assertArrayEquals(expected, got);
        }
        assertTrue(firstChoices.contains("decode-full"), "the full worker was tried first sometimes: " + firstChoices);
        assertEquals(0, router.router().requests().loads().total());
    }
}
