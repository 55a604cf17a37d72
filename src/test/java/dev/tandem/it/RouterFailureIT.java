package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.it.TandemCluster.Node;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A router replica killed with SIGKILL in the middle of its streams: the other replica keeps serving,
 * sessions keep their decode workers, and within a few heartbeats nothing — neither the surviving
 * router's load view nor the workers' own load — is attributed to the dead router any more.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RouterFailureIT extends ClusterIT {
    private TandemProcess routerA;
    private TandemProcess routerB;

    @BeforeAll
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void start() {
        cluster = new TandemCluster(
                RouterFailureIT.class,
                Map.of(
                        "worker.heartbeat-ms",
                        100,
                        "router.load-report-ms",
                        100,
                        "model.emulated-decode-step-us",
                        20_000));
        List<TandemProcess> nodes = cluster.start(
                Node.prefill("prefill-1"),
                Node.decode("decode-1"),
                Node.decode("decode-2"),
                Node.router("router-a"),
                Node.router("router-b"));
        routerA = nodes.get(3);
        routerB = nodes.get(4);
        cluster.awaitWorkers(routerA, 1, 2);
        cluster.awaitWorkers(routerB, 1, 2);
    }

    @Test
    void theOtherReplicaServesOnAndTheDeadOnesLoadVanishes() throws Exception {
        // Sessions pinned through router B before it dies.
        List<String> sessions = new ArrayList<>();
        List<String> pinned = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            sessions.add("s-" + i + "-" + UUID.randomUUID());
            pinned.add(session(routerB, sessions.get(i)).decodeWorker());
        }
        assertEquals(2, pinned.stream().distinct().count(), "sessions on both decode workers: " + pinned);

        // Long streams through router B; router A must see them in B's load reports.
        List<CompletableFuture<HttpResponse<String>>> doomed = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            doomed.add(cluster.http(routerB)
                    .postAsync(
                            "/v1/completions",
                            Completion.seeded("Doomed stream " + i, 100 + i, 400)
                                    .body(true)
                                    .encode()));
        }
        String routerBId = routerB.routerId();
        TestNodes.awaitTrue(
                () -> inFlightReportedBy(routerA, routerBId) >= 8, "router A to count router B's 8 streams");
        TestNodes.awaitTrue(() -> activeSequences() >= 8, "the decode workers to report router B's streams");

        long killed = System.nanoTime();
        routerB.kill9();
        // Nothing is attributed to the dead router: not in router A's view, not on the workers.
        TestNodes.awaitTrue(() -> !reportedRouters(routerA).contains(routerBId), "router A to drop router B's report");
        long viewMs = (System.nanoTime() - killed) / 1_000_000;
        TestNodes.awaitTrue(() -> activeSequences() == 0, "the decode workers to drop router B's sequences");
        long workersMs = (System.nanoTime() - killed) / 1_000_000;
        System.out.printf(
                "router kill: router A dropped B's load after %d ms, the registry showed no sequence of B"
                        + " after %d ms (heartbeat 100 ms)%n",
                viewMs, workersMs);
        for (CompletableFuture<HttpResponse<String>> call : doomed) {
            assertTrue(call.handle((r, e) -> e != null).get(10, TimeUnit.SECONDS), "a stream of the dead router ended");
        }

        // Router A keeps serving, exactly.
        Completion c = Completion.seeded("After the crash", 4242, 24);
        Completion.Answer after = Completion.Answer.of(
                cluster.http(routerA).post("/v1/completions", c.body(false).encode()), false, "router A");
        assertArrayEquals(c.expectedTokens(), after.tokenIds());
        // Sessions pinned through the dead router still reach their decode workers.
        for (int i = 0; i < sessions.size(); i++) {
            assertEquals(
                    pinned.get(i),
                    session(routerA, sessions.get(i)).decodeWorker(),
                    "session " + i + " after the crash");
        }
        assertEquals(0, inFlightReportedBy(routerA, routerA.routerId()), "router A's own load is back to zero");
    }

    private Completion.Answer session(TandemProcess router, String session) {
        var http = cluster.http(router);
        JsonObject body = new JsonObject()
                .put("prompt", "Same session")
                .put("max_tokens", 3)
                .put("temperature", 0)
                .put("user", session);
        HttpResponse<String> r = http.send(http.request("/v1/completions")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.encode()))
                .build());
        return Completion.Answer.of(r, false, router.name());
    }

    private JsonArray routers(TandemProcess router) {
        HttpResponse<String> r = cluster.http(router)
                .send(cluster.http(router).request("/admin/routers").GET().build());
        assertEquals(200, r.statusCode(), r.body());
        return new JsonObject(r.body()).getJsonArray("routers");
    }

    private List<String> reportedRouters(TandemProcess router) {
        List<String> ids = new ArrayList<>();
        for (Object o : routers(router)) {
            ids.add(((JsonObject) o).getString("router"));
        }
        return ids;
    }

    private int inFlightReportedBy(TandemProcess viewer, String routerId) {
        for (Object o : routers(viewer)) {
            JsonObject r = (JsonObject) o;
            if (r.getString("router").equals(routerId)) {
                return r.getInteger("requests_in_flight");
            }
        }
        return 0;
    }

    /** Active decode sequences over every decode worker, from the registry as router A sees it. */
    private int activeSequences() {
        int sum = 0;
        for (Object o : cluster.workers(routerA)) {
            JsonObject w = (JsonObject) o;
            if ("decode".equals(w.getString("role"))) {
                sum += w.getJsonObject("load").getInteger("active_sequences");
            }
        }
        return sum;
    }
}
