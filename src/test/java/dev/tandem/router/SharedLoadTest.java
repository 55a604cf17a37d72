package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Least-loaded prefill counts the other replicas' dispatches: a request router B has in prefill on
 * prefill-1 makes router A — which has nothing in flight itself — choose prefill-2. Without the
 * shared load, A would see a tie and its round-robin would start at prefill-1. Least-loaded prefill is
 * the {@code seed} policy's (and {@code least-loaded}'s); the default policy reads the shared in-flight
 * counts in {@code active-sequences} and {@code load-threshold}.
 */
class SharedLoadTest {

    @Test
    void aReplicaAvoidsTheWorkerAnotherReplicaIsUsing() throws Exception {
        TandemConfig base = TestNodes.config();
        TandemConfig config = TestSettings.withRouter(base, TestSettings.withPolicy(base.router(), "seed"));
        // Prefill paced to 40 ms per prompt token: a 30-token prompt holds its worker for over a second.
        TandemNode workers = TandemNode.start(
                config,
                new TandemNode.Plan(false, List.of("prefill-1", "prefill-2"), List.of("decode-1")),
                new PacedEngine(ReferenceEngine.builtin(16), 0, 40_000));
        TandemNode routerA = TandemNode.start(config, new TandemNode.Plan(true, List.of(), List.of()));
        TandemNode routerB = TandemNode.start(config, new TandemNode.Plan(true, List.of(), List.of()));
        try {
            TestNodes.awaitWorkers(routerA.router(), 2, 1);
            TestNodes.awaitWorkers(routerB.router(), 2, 1);
            CompletableFuture<HttpResponse<String>> slow = new HttpTestClient(
                            routerB.router().httpPort())
                    .postAsync("/v1/completions", body("A long prompt that keeps its prefill worker busy for a while"));
            String bId = routerB.router().routerId();
            HttpTestClient a = new HttpTestClient(routerA.router().httpPort());
            TestNodes.awaitTrue(
                    () -> inFlightOf(a, bId, "prefill-1") == 1, "router A to see router B's prefill on prefill-1");

            HttpResponse<String> viaA = a.post("/v1/completions", body("Short"));
            assertEquals(200, viaA.statusCode(), viaA.body());
            assertEquals(
                    "prefill-2",
                    viaA.headers().firstValue("X-Tandem-Prefill-Worker").orElseThrow());

            HttpResponse<String> viaB = slow.get(30, TimeUnit.SECONDS);
            assertEquals(200, viaB.statusCode(), viaB.body());
            assertEquals(
                    "prefill-1",
                    viaB.headers().firstValue("X-Tandem-Prefill-Worker").orElseThrow());
            // Released everywhere: B's report drops to nothing and A counts nothing on any worker.
            TestNodes.awaitTrue(
                    () -> inFlightOf(a, bId, "prefill-1") == 0 && inFlightOf(a, bId, "decode-1") == 0,
                    "router B's load to go back to zero in router A's view");
        } finally {
            routerB.close().await();
            routerA.close().await();
            workers.close().await();
        }
    }

    private static String body(String prompt) {
        return new JsonObject()
                .put("prompt", prompt)
                .put("max_tokens", 2)
                .put("temperature", 0)
                .encode();
    }

    /** What router {@code routerId} reports in flight on a worker, as seen through {@code viewer}'s admin API. */
    private static int inFlightOf(HttpTestClient viewer, String routerId, String workerId) {
        HttpResponse<String> r =
                viewer.send(viewer.request("/admin/routers").GET().build());
        for (Object o : new JsonObject(r.body()).getJsonArray("routers")) {
            JsonObject report = (JsonObject) o;
            if (report.getString("router").equals(routerId)) {
                return report.getJsonObject("in_flight").getInteger(workerId, 0);
            }
        }
        return -1;
    }
}
