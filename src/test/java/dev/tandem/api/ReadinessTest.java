package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A router is live as soon as it answers, but ready only with a prefill and a decode worker
 * registered; it turns unready again when they leave. A worker node with {@code worker.http-port}
 * serves the same endpoints on its own port.
 */
class ReadinessTest {

    @Test
    void aRouterIsReadyOnlyWhileItHasWorkersOfBothRoles() {
        TandemConfig base = TestNodes.config();
        TandemNode router = TandemNode.start(base, new TandemNode.Plan(true, List.of(), List.of()));
        try {
            HttpTestClient http = new HttpTestClient(router.router().httpPort());
            assertEquals(200, get(http, "/health").statusCode());
            HttpResponse<String> unready = get(http, "/ready");
            assertEquals(503, unready.statusCode(), unready.body());
            assertTrue(unready.body().contains("0 prefill, 0 decode"), unready.body());

            TandemConfig workerConfig = base.withWorker(TestSettings.withHttpPort(base.worker(), 0));
            TandemNode workers = TandemNode.start(
                    workerConfig, new TandemNode.Plan(false, List.of("prefill-1"), List.of("decode-1")));
            try {
                TestNodes.awaitTrue(
                        () -> get(http, "/ready").statusCode() == 200,
                        Duration.ofSeconds(10),
                        "the router to be ready with one worker of each role");
                JsonObject ready = new JsonObject(get(http, "/ready").body());
                assertEquals("UP", ready.getString("status"));

                HttpTestClient workerOps = new HttpTestClient(workers.opsPort());
                assertEquals(200, get(workerOps, "/health").statusCode());
                assertEquals(200, get(workerOps, "/ready").statusCode());
                assertEquals(
                        200,
                        http.post("/v1/completions", "{\"prompt\": \"hi\", \"max_tokens\": 3}")
                                .statusCode());
                String workerScrape = get(workerOps, "/metrics").body();
                assertTrue(
                        workerScrape.contains("tandem_decode_step_seconds_count{worker=\"decode-1\"}"),
                        "worker metrics");
                assertTrue(
                        workerScrape.contains("tandem_prefill_compute_seconds_count{worker=\"prefill-1\"}"),
                        "worker metrics");
            } finally {
                workers.close().await();
            }
            TestNodes.awaitTrue(
                    () -> get(http, "/ready").statusCode() == 503,
                    Duration.ofSeconds(10),
                    "the router to be unready once its workers left");
            assertEquals(200, get(http, "/health").statusCode());
        } finally {
            router.close().await();
        }
    }

    @Test
    void aWorkerNodeHasNoHttpServerUnlessConfigured() {
        TandemNode workers =
                TandemNode.start(TestNodes.config(), new TandemNode.Plan(false, List.of("prefill-1"), List.of()));
        try {
            assertEquals(-1, workers.opsPort());
        } finally {
            workers.close().await();
        }
    }

    private static HttpResponse<String> get(HttpTestClient http, String path) {
        return http.send(http.request(path).GET().build());
    }
}
