package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.it.TandemCluster.Node;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The cluster under changing load and membership, two router replicas in separate JVMs: overload is
 * refused with 429s (never timeouts) and the cluster serves normally afterwards; a decode worker
 * started later is used without restarting anything; a drained worker finishes its streams and gets
 * no new ones. In this order: the late worker joins after the overload, and is the one drained.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ElasticityIT extends ClusterIT {
    private static final int OVERLOAD_CONCURRENCY = 96;
    private static final int OVERLOAD_SECONDS = 6;
    private static final int OVERLOAD_MAX_REQUESTS = 20_000;

    private TandemProcess routerA;
    private TandemProcess routerB;

    @BeforeAll
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void start() {
        cluster = new TandemCluster(
                ElasticityIT.class,
                Map.of(
                        "worker.heartbeat-ms",
                        100,
                        "router.load-report-ms",
                        100,
                        "model.emulated-decode-step-us",
                        10_000,
                        // Small bounds so that 96 concurrent clients are well above capacity.
                        "router.max-in-flight",
                        24,
                        "worker.max-batch",
                        8,
                        "worker.max-waiting-sequences",
                        4,
                        // And room for 16 waiting in each router's queue: the rest is refused (queue_full).
                        "flow-control.max-queued-per-tenant",
                        16));
        List<TandemProcess> nodes = cluster.start(
                Node.prefill("prefill-1"), Node.decode("decode-1"), Node.router("router-a"), Node.router("router-b"));
        routerA = nodes.get(2);
        routerB = nodes.get(3);
        cluster.awaitWorkers(routerA, 1, 1);
        cluster.awaitWorkers(routerB, 1, 1);
    }

    @Test
    @Order(1)
    void overloadIsRefusedWith429sAndServiceResumesAfterwards() throws Exception {
        long unloadedMs = warmUp();
        // Closed loop: 96 clients send again as soon as they are answered (refusals too), for a bounded time
        // and count — offered load many times what 12 decode slots can serve.
        Semaphore slots = new Semaphore(OVERLOAD_CONCURRENCY);
        List<Completion> cases = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        List<Long> admittedMs = Collections.synchronizedList(new ArrayList<>());
        long start = System.nanoTime();
        long stopAt = start + TimeUnit.SECONDS.toNanos(OVERLOAD_SECONDS);
        for (int i = 0; i < OVERLOAD_MAX_REQUESTS && System.nanoTime() < stopAt; i++) {
            Completion c = Completion.seeded("Load " + i, 500 + i, 24);
            cases.add(c);
            assertTrue(slots.tryAcquire(30, TimeUnit.SECONDS), "a client slot freed up");
            long sent = System.nanoTime();
            calls.add(cluster.http(i % 2 == 0 ? routerA : routerB)
                    .postAsync("/v1/completions", c.body(false).encode())
                    .whenComplete((r, e) -> {
                        slots.release();
                        if (r != null && r.statusCode() == 200) {
                            admittedMs.add((System.nanoTime() - sent) / 1_000_000);
                        }
                    }));
        }
        int ok = 0;
        int refused = 0;
        for (int i = 0; i < calls.size(); i++) {
            HttpResponse<String> r = calls.get(i).get(30, TimeUnit.SECONDS);
            if (r.statusCode() == 429) {
                refused++;
                assertTrue(r.headers().firstValue("Retry-After").isPresent(), "429 without Retry-After");
                String code = new JsonObject(r.body()).getJsonObject("error").getString("code");
                assertTrue(
                        code.equals("overloaded") || code.equals("workers_at_capacity") || code.equals("queue_full"),
                        r.body());
            } else {
                ok++;
                assertArrayEquals(
                        cases.get(i).expectedTokens(),
                        Completion.Answer.of(r, false, "load " + i).tokenIds(),
                        "tokens of admitted request " + i);
            }
        }
        long wallMs = (System.nanoTime() - start) / 1_000_000;
        List<Long> sorted = new ArrayList<>(admittedMs);
        Collections.sort(sorted);
        System.out.printf(
                "overload: %d requests from %d closed-loop clients in %d ms: %d served, %d refused with 429;"
                        + " admitted latency p50 %d ms, p99 %d ms, max %d ms (unloaded %d ms)%n",
                calls.size(),
                OVERLOAD_CONCURRENCY,
                wallMs,
                ok,
                refused,
                sorted.get(sorted.size() / 2),
                sorted.get((int) (sorted.size() * 0.99)),
                sorted.get(sorted.size() - 1),
                unloadedMs);
        assertTrue(refused > 0, "load well above capacity was refused in part");
        assertTrue(ok > 0, "some load was served");
        // The load is gone: both replicas serve normally again.
        for (TandemProcess router : List.of(routerA, routerB)) {
            Completion c = Completion.seeded("Calm again", 77, 16);
            assertArrayEquals(
                    c.expectedTokens(),
                    Completion.Answer.of(
                                    cluster.http(router)
                                            .post(
                                                    "/v1/completions",
                                                    c.body(true).encode()),
                                    true,
                                    router.name())
                            .tokenIds());
        }
        assertTrue(routerA.isAlive() && routerB.isAlive(), "both routers survived");
    }

    /** A few requests through each router so the JVMs are warm; returns the last one's latency. */
    private long warmUp() {
        long ms = 0;
        for (int i = 0; i < 16; i++) {
            TandemProcess router = i % 2 == 0 ? routerA : routerB;
            long sent = System.nanoTime();
            Completion c = Completion.seeded("Warm " + i, i, 24);
            assertArrayEquals(
                    c.expectedTokens(),
                    Completion.Answer.of(
                                    cluster.http(router)
                                            .post(
                                                    "/v1/completions",
                                                    c.body(false).encode()),
                                    false,
                                    router.name())
                            .tokenIds());
            ms = (System.nanoTime() - sent) / 1_000_000;
        }
        return ms;
    }

    @Test
    @Order(2)
    void aWorkerStartedLaterIsUsed() {
        cluster.start(Node.decode("decode-2"));
        cluster.awaitWorkers(routerA, 1, 2);
        cluster.awaitWorkers(routerB, 1, 2);
        List<String> used = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            TandemProcess router = i % 2 == 0 ? routerA : routerB;
            Completion c = Completion.seeded("Newcomer " + i, 900 + i, 8);
            Completion.Answer a = Completion.Answer.of(
                    cluster.http(router).post("/v1/completions", c.body(false).encode()), false, router.name());
            assertArrayEquals(c.expectedTokens(), a.tokenIds());
            used.add(a.decodeWorker());
        }
        assertTrue(used.contains("decode-2"), "the late worker served: " + used);
    }

    @Test
    @Order(3)
    void aDrainedWorkerFinishesItsStreamsAndGetsNoNewOnes() throws Exception {
        // The worker drained is the one these streams run on: the scheduler may put them all on one worker
        // (they share a cached prefix), and a load report from before them is up to a heartbeat old.
        TestNodes.awaitTrue(
                () -> activeSequences("decode-1") == 0 && activeSequences("decode-2") == 0,
                "both decode workers idle before the streams");
        List<Completion> running = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Completion c = Completion.seeded("Draining stream " + i, 300 + i, 200);
            running.add(c);
            calls.add(cluster.http(routerA)
                    .postAsync("/v1/completions", c.body(true).encode()));
        }
        TestNodes.awaitTrue(() -> activeSequences("decode-1") + activeSequences("decode-2") > 0, "the streams running");
        String drained = activeSequences("decode-1") >= activeSequences("decode-2") ? "decode-1" : "decode-2";
        // Drained through the other replica: the flag travels through the registry.
        HttpResponse<String> drain = cluster.http(routerB)
                .send(cluster.http(routerB)
                        .request("/admin/workers/" + drained + "/drain")
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build());
        assertEquals(200, drain.statusCode(), drain.body());
        awaitDraining(routerA, drained);
        awaitDraining(routerB, drained);
        for (int i = 0; i < 8; i++) {
            TandemProcess router = i % 2 == 0 ? routerA : routerB;
            Completion c = Completion.seeded("While draining " + i, 1300 + i, 6);
            Completion.Answer a = Completion.Answer.of(
                    cluster.http(router).post("/v1/completions", c.body(false).encode()), false, router.name());
            assertArrayEquals(c.expectedTokens(), a.tokenIds());
            assertNotEquals(drained, a.decodeWorker(), "a new request went to the draining worker");
        }
        int onDrained = 0;
        for (int i = 0; i < running.size(); i++) {
            Completion.Answer a = Completion.Answer.of(calls.get(i).get(60, TimeUnit.SECONDS), true, "stream " + i);
            assertArrayEquals(running.get(i).expectedTokens(), a.tokenIds(), "stream " + i + " finished exactly");
            if (drained.equals(a.decodeWorker())) {
                onDrained++;
            }
        }
        assertTrue(onDrained > 0, "some streams ran on the drained worker");
    }

    private int activeSequences(String id) {
        JsonObject w = worker(routerA, id);
        return w == null ? 0 : w.getJsonObject("load").getInteger("active_sequences");
    }

    private void awaitDraining(TandemProcess router, String id) {
        TestNodes.awaitTrue(
                () -> {
                    JsonObject w = worker(router, id);
                    return w != null && w.getBoolean("draining");
                },
                router.name() + " to see " + id + " draining");
    }
}
