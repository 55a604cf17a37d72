package dev.tandem.bridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.ClusterSnapshot;
import dev.tandem.protocol.WorkerView;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The SockJS bridge in a clustered Vert.x with two routers: node A runs the workers and a router with
 * {@code bridge.sockjs: false}; node B is a router only. A SockJS client of B is served by B's own
 * local consumer of {@code tandem.generate} (the bridge sends through the clustered event bus, where
 * those consumers are not registered, so delivery stays local), its pushes reach it, and B's console
 * feed shows the whole cluster: A's workers, both routers, B's request rate and affinity hit rate.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SockJsClusterTest {
    private TandemNode workers;
    private TandemNode router;
    private HttpTestClient http;
    private int port;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        workers = TandemNode.start(
                config.withBridge(TestSettings.withSockjs(config.bridge(), false)), TandemNode.Plan.embedded(2, 2));
        router = TandemNode.start(config, new TandemNode.Plan(true, List.of(), List.of()));
        TestNodes.awaitWorkers(router.router(), 2, 2);
        port = router.router().httpPort();
        http = new HttpTestClient(port);
    }

    @AfterAll
    void stop() {
        for (TandemNode n : new TandemNode[] {router, workers}) {
            if (n != null) {
                n.close().await();
            }
        }
    }

    @Test
    void aSockJsRequestIsServedByTheRouterItIsConnectedTo() throws Exception {
        double okOnA = ok(workers);
        double okOnB = ok(router);
        JsonObject body = new JsonObject()
                .put("prompt", "which router?")
                .put("max_tokens", 8)
                .put("temperature", 0);
        String expected = new JsonObject(SockJsBridgeTest.ok(http.post("/v1/completions", body.encode())))
                .getJsonArray("choices")
                .getJsonObject(0)
                .getString("text");
        try (SockJsTestClient c = SockJsTestClient.connect(port)) {
            c.registerOwnAddress();
            String id = c.generate(body);
            SockJsTestClient.Streamed s = c.collect(id);
            assertEquals(expected, s.text());
            assertEquals("length", s.last().getString("finish_reason"));
        }
        TestNodes.awaitTrue(() -> ok(router) == okOnB + 2, "router B to count the HTTP request and the SockJS one");
        assertEquals(okOnA, ok(workers), "router A served none");
    }

    @Test
    void routerAWithoutSockJsHasNoEventBusButServesTheConsolePage() {
        HttpTestClient a = new HttpTestClient(workers.router().httpPort());
        assertEquals(404, a.send(a.request("/eventbus/info").GET().build()).statusCode());
        assertEquals(200, a.send(a.request("/").GET().build()).statusCode());
        assertEquals(
                200, http.send(http.request("/eventbus/info").GET().build()).statusCode());
    }

    @Test
    void theConsoleFeedShowsTheClusterAndItsRates() throws Exception {
        try (SockJsTestClient c = SockJsTestClient.connect(port)) {
            c.register(Addresses.CONSOLE_CLUSTER);
            ClusterSnapshot first = snapshot(c, s -> s.routers().size() == 2);
            assertEquals(router.router().routerId(), first.routerId());
            assertEquals(
                    List.of("prefill-1", "prefill-2"),
                    first.prefill().stream().map(WorkerView::id).toList());
            assertEquals(
                    List.of("decode-1", "decode-2"),
                    first.decode().stream().map(WorkerView::id).toList());
            WorkerView decode = first.decode().get(0);
            assertEquals("tandem-builtin", decode.model());
            assertTrue(decode.load().kvBytesCapacity() > 0, "a decode worker reports its KV capacity");
            assertTrue(first.routers().stream()
                    .anyMatch(
                            r -> r.self() && r.routerId().equals(router.router().routerId())));
            assertTrue(first.routers().stream()
                    .anyMatch(r ->
                            !r.self() && r.routerId().equals(workers.router().routerId())));
            assertTrue(Math.abs(first.timeMillis() - System.currentTimeMillis()) < 10_000, "a wall-clock time");

            // Session requests: the first misses (no session yet), the next ones reach the session's worker.
            for (int i = 0; i < 4; i++) {
                SockJsBridgeTest.ok(http.post(
                        "/v1/completions",
                        new JsonObject()
                                .put("prompt", "again " + i)
                                .put("max_tokens", 2)
                                .put("user", "console-test")
                                .encode()));
            }
            ClusterSnapshot busy = snapshot(c, s -> s.requestsPerSecond() > 0 && s.affinityHits() >= 3);
            assertEquals(1, busy.affinityMisses(), "only the session's first request missed");
            assertEquals(busy.affinityHits() / (double) (busy.affinityHits() + 1), busy.affinityHitRate(), 1e-9);
            assertTrue(busy.requestsPerSecond() < 100, "a rate per second, not a total: " + busy.requestsPerSecond());
            // Nothing runs any more: the rate falls back to zero over the next periods.
            snapshot(c, s -> s.requestsPerSecond() == 0);

            c.write(new JsonObject().put("type", "unregister").put("address", Addresses.CONSOLE_CLUSTER));
            c.drain(Duration.ofMillis(300));
            assertNull(firstConsoleFrame(c.drain(Duration.ofMillis(1500))), "no snapshot after the last listener left");
        }
    }

    /** Snapshots arrive once a second while someone listens; waits for one matching {@code p}. */
    private static ClusterSnapshot snapshot(SockJsTestClient c, Predicate<ClusterSnapshot> p) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        ClusterSnapshot last = null;
        while (System.nanoTime() < deadline) {
            JsonObject frame = c.await(f -> Addresses.CONSOLE_CLUSTER.equals(f.getString("address")), "a snapshot");
            assertEquals("rec", frame.getString("type"), frame.encode());
            last = ClusterSnapshot.CODEC.decode(frame.getJsonObject("body"));
            if (p.test(last)) {
                return last;
            }
        }
        throw new AssertionError("no matching snapshot within 15 s; the last: " + last);
    }

    private static JsonObject firstConsoleFrame(List<JsonObject> frames) {
        return frames.stream()
                .filter(f -> Addresses.CONSOLE_CLUSTER.equals(f.getString("address")))
                .findFirst()
                .orElse(null);
    }

    private static double ok(TandemNode node) {
        return node.metrics()
                .registry()
                .counter("tandem.requests", "outcome", "ok")
                .count();
    }

    @Test
    void noSnapshotWithoutAListener() throws Exception {
        try (SockJsTestClient c = SockJsTestClient.connect(port)) {
            c.registerOwnAddress();
            assertNull(
                    firstConsoleFrame(c.drain(Duration.ofMillis(1500))), "a socket that did not ask gets no snapshot");
            c.register(Addresses.CONSOLE_CLUSTER);
            assertNotNull(c.await(
                    f -> Addresses.CONSOLE_CLUSTER.equals(f.getString("address")), "the first snapshot, at once"));
        }
    }
}
