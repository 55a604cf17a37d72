package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** A drained worker finishes the streams it has and gets no new ones; undrained, it serves again. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DrainTest {
    private TandemNode node;
    private HttpTestClient http;

    @BeforeAll
    void start() {
        node = TandemNode.start(
                TestNodes.config(), TandemNode.Plan.embedded(1, 2), new PacedEngine(ReferenceEngine.builtin(16), 10));
        TestNodes.awaitWorkers(node.router(), 1, 2);
        http = new HttpTestClient(node.router().httpPort());
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private boolean draining(String id) {
        return node.router().directory().workers(WorkerRole.DECODE).stream()
                .anyMatch(w -> w.workerId().equals(id) && w.draining());
    }

    private String decodeWorkerOf(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        return r.headers().firstValue("X-Tandem-Decode-Worker").orElseThrow();
    }

    @Test
    void aDrainedWorkerFinishesItsStreamsAndReceivesNoNewOnes() {
        List<CompletableFuture<HttpResponse<String>>> running = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            running.add(http.postAsync(
                    "/v1/completions",
                    new JsonObject()
                            .put("prompt", "long " + i)
                            .put("max_tokens", 80)
                            .put("temperature", 0)
                            .put("stream", true)
                            .encode()));
        }
        TestNodes.awaitTrue(() -> node.router().requests().activeRequests() == 2, Duration.ofSeconds(5), "two streams");
        // Heartbeats carry load: the registry shows the running sequences and their KV.
        TestNodes.awaitTrue(
                () -> node.router().directory().workers(WorkerRole.DECODE).stream()
                        .anyMatch(w -> w.load().activeSequences() > 0
                                && w.load().kvBytesUsed() > 0
                                && w.load().kvBytesCapacity() > w.load().kvBytesUsed()),
                Duration.ofSeconds(5),
                "the registry to show the load");

        HttpResponse<String> drained = http.post("/admin/workers/decode-1/drain", "{}");
        assertEquals(200, drained.statusCode(), drained.body());
        assertTrue(new JsonObject(drained.body()).getBoolean("draining"));
        TestNodes.awaitTrue(() -> draining("decode-1"), Duration.ofSeconds(5), "the registry to show the drain");
        for (int i = 0; i < 4; i++) {
            assertEquals(
                    "decode-2",
                    decodeWorkerOf(http.post("/v1/completions", "{\"prompt\": \"new\", \"max_tokens\": 2}")));
        }
        Set<String> finishedOn = new HashSet<>();
        for (CompletableFuture<HttpResponse<String>> f : running) {
            HttpResponse<String> r = f.join();
            finishedOn.add(decodeWorkerOf(r));
            HttpTestClient.SseResult sse = HttpTestClient.parseSse(r.body());
            assertEquals(1, sse.doneCount());
            assertTrue(sse.tokenIds().length > 0);
        }
        assertEquals(Set.of("decode-1", "decode-2"), finishedOn, "the drained worker finished its own stream");

        assertEquals(
                200,
                http.post("/admin/workers/decode-1/drain", "{\"draining\": false}")
                        .statusCode());
        TestNodes.awaitTrue(() -> !draining("decode-1"), Duration.ofSeconds(5), "the drain to be lifted");
        // Once both heartbeats report no sequences, concurrent requests spread over both: the default
        // policy sends each to the worker with the fewest sequences, counting the ones just dispatched.
        TestNodes.awaitTrue(
                () -> node.router().directory().workers(WorkerRole.DECODE).stream()
                        .allMatch(w -> w.load().activeSequences() == 0),
                Duration.ofSeconds(5),
                "the heartbeats to report both decode workers idle");
        List<CompletableFuture<HttpResponse<String>>> again = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            again.add(http.postAsync("/v1/completions", "{\"prompt\": \"again\", \"max_tokens\": 2}"));
        }
        Set<String> used = new HashSet<>();
        for (CompletableFuture<HttpResponse<String>> f : again) {
            used.add(decodeWorkerOf(f.join()));
        }
        assertEquals(Set.of("decode-1", "decode-2"), used);
    }

    @Test
    void drainingAnUnknownWorkerIsA404AndABadBodyA400() {
        assertEquals(404, http.post("/admin/workers/nobody/drain", "{}").statusCode());
        assertEquals(
                400,
                http.post("/admin/workers/decode-2/drain", "{\"draining\": \"yes\"}")
                        .statusCode());
        HttpResponse<String> list =
                http.send(http.request("/admin/workers").GET().build());
        assertEquals(3, new JsonObject(list.body()).getJsonArray("workers").size());
    }
}
