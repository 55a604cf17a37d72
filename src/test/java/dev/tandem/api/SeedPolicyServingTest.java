package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.TandemNode;
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

/**
 * The {@code seed} scheduling policy end to end ({@code router.policy: seed} on an embedded node of 2
 * prefill and 2 decode workers): decode workers take turns for requests without a session, and prefill
 * goes to the worker with the fewest requests in flight.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SeedPolicyServingTest {
    private TandemNode node;
    private HttpTestClient http;

    @BeforeAll
    void start() {
        TandemConfig base = TestNodes.config();
        TandemConfig config = TestSettings.withRouter(base, TestSettings.withPolicy(base.router(), "seed"));
        node = TestNodes.startEmbedded(config, 2, 2);
        http = new HttpTestClient(node.router().httpPort());
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private static String body(String prompt) {
        return new JsonObject()
                .put("prompt", prompt)
                .put("max_tokens", 2)
                .put("temperature", 0)
                .encode();
    }

    private static String header(HttpResponse<String> response, String name) {
        assertEquals(200, response.statusCode(), response.body());
        return response.headers().firstValue(name).orElseThrow();
    }

    @Test
    void withoutASessionDecodeWorkersTakeTurns() {
        List<String> workers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            workers.add(header(http.post("/v1/completions", body("round robin")), "X-Tandem-Decode-Worker"));
        }
        for (int i = 1; i < workers.size(); i++) {
            assertNotEquals(
                    workers.get(i - 1), workers.get(i), "consecutive requests went to one decode worker: " + workers);
        }
        assertEquals(Set.of("decode-1", "decode-2"), new HashSet<>(workers));
    }

    @Test
    void prefillGoesToTheLeastLoadedWorker() {
        // Make prefill-1 look busy to this router; every new request must then go to prefill-2.
        for (int i = 0; i < 5; i++) {
            node.router().requests().loads().acquire("prefill-1");
        }
        try {
            for (int i = 0; i < 4; i++) {
                assertEquals(
                        "prefill-2",
                        header(http.post("/v1/completions", body("least loaded")), "X-Tandem-Prefill-Worker"));
            }
        } finally {
            for (int i = 0; i < 5; i++) {
                node.router().requests().loads().release("prefill-1");
            }
        }
    }
}
