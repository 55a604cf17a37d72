package dev.tandem.bridge.worker;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.bridge.BridgeTestClient;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The worker bridge with a router, one Java prefill and one Java decode worker: an external decode
 * worker decodes from KV a Java prefill worker shipped it (base64 over the bridge), an external
 * prefill worker ships KV to a Java decode worker, and either way the text is exactly the local
 * engine's. The registry follows the connection, and a worker that vanishes mid-request costs the
 * client nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WorkerBridgeTest {
    private final Engine engine = ReferenceEngine.builtin(16);
    private TandemNode node;
    private HttpTestClient http;
    private int port;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        // No local prefill: each expected answer is computed first through decode-0, whose prefix cache would
        // then prefill the prompt itself instead of sending it to the external prefill worker under test.
        config = TestSettings.withRouter(
                config.withWorkerBridge(
                                TestSettings.withToken(config.workerBridge().withTcpPort(0), FakeExternalWorker.TOKEN))
                        .withWorker(TestSettings.withHeartbeat(config.worker(), 100, 1000)),
                TestSettings.withLocalPrefillMaxTokens(config.router(), 0));
        node = TandemNode.start(config, new TandemNode.Plan(true, List.of("prefill-0"), List.of("decode-0")), engine);
        TestNodes.awaitWorkers(node.router(), 1, 1);
        port = node.workerBridge().port();
        http = new HttpTestClient(node.router().httpPort());
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    @AfterEach
    void javaWorkersBackAndExternalOnesGone() {
        drain("prefill-0", false);
        drain("decode-0", false);
        TestNodes.awaitWorkers(node.router(), 1, 1);
    }

    @Test
    void anExternalDecodeWorkerDecodesFromKvAJavaPrefillWorkerShipped() throws Exception {
        JsonObject body = new JsonObject()
                .put("prompt", "Over the bridge")
                .put("max_tokens", 10)
                .put("temperature", 0);
        int[] expected = javaAnswer(body);
        try (FakeExternalWorker worker = new FakeExternalWorker(port, engine)) {
            JsonObject welcome = worker.join("decode", "py-decode-1");
            assertEquals("py-decode-1", welcome.getString("worker_id"));
            assertEquals(
                    engine.info().config().vocabSize(),
                    welcome.getJsonObject("model").getInteger("vocab_size"));
            assertEquals(
                    List.of(
                            Addresses.decodeKv("py-decode-1"),
                            Addresses.decodeStart("py-decode-1"),
                            Addresses.decodeCancel("py-decode-1"),
                            Addresses.workerStatus("py-decode-1"),
                            Addresses.workerDrain("py-decode-1")),
                    welcome.getJsonArray("addresses").getList());
            TestNodes.awaitWorkers(node.router(), 1, 2);
            drain("decode-0", true);

            CompletableFuture<HttpResponse<String>> response = http.postAsync("/v1/completions", body.encode());
            KvCache cache = worker.receiveKv();
            worker.decode(cache);
            HttpResponse<String> r = response.get(30, TimeUnit.SECONDS);

            assertEquals(200, r.statusCode(), r.body());
            assertEquals(
                    "py-decode-1",
                    r.headers().firstValue("X-Tandem-Decode-Worker").orElse(null));
            assertArrayEquals(expected, HttpTestClient.tokenIds(r));
        }
        awaitGone("py-decode-1");
    }

    @Test
    void anExternalPrefillWorkerShipsKvToAJavaDecodeWorker() throws Exception {
        JsonObject body = new JsonObject()
                .put("prompt", "Shipped in pieces")
                .put("max_tokens", 12)
                .put("temperature", 0);
        int[] expected = javaAnswer(body);
        try (FakeExternalWorker worker = new FakeExternalWorker(port, engine)) {
            worker.join("prefill", "py-prefill-1");
            TestNodes.awaitWorkers(node.router(), 2, 1);
            drain("prefill-0", true);

            CompletableFuture<HttpResponse<String>> response = http.postAsync("/v1/completions", body.encode());
            // 256-byte chunks: the KV crosses the bridge as many base64 frames, reassembled on the Java side.
            worker.prefill(worker.awaitMessage(Addresses.prefill("py-prefill-1")), 256);
            HttpResponse<String> r = response.get(30, TimeUnit.SECONDS);

            assertEquals(200, r.statusCode(), r.body());
            assertEquals(
                    "py-prefill-1",
                    r.headers().firstValue("X-Tandem-Prefill-Worker").orElse(null));
            assertArrayEquals(expected, HttpTestClient.tokenIds(r));
        }
        awaitGone("py-prefill-1");
    }

    @Test
    void aWorkerThatDisconnectsHoldingAPromptCostsTheClientNothing() throws Exception {
        JsonObject body = new JsonObject()
                .put("prompt", "Left mid-way")
                .put("max_tokens", 6)
                .put("temperature", 0);
        int[] expected = javaAnswer(body);
        FakeExternalWorker worker = new FakeExternalWorker(port, engine);
        worker.join("prefill", "py-prefill-2");
        TestNodes.awaitWorkers(node.router(), 2, 1);
        drain("prefill-0", true);
        CompletableFuture<HttpResponse<String>> response = http.postAsync("/v1/completions", body.encode());
        worker.awaitMessage(Addresses.prefill("py-prefill-2"));
        drain("prefill-0", false);
        long closed = System.nanoTime();
        worker.close(); // the router's prefill is failed at once, and it goes to prefill-0

        HttpResponse<String> r = response.get(30, TimeUnit.SECONDS);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closed);
        assertEquals(200, r.statusCode(), r.body());
        assertArrayEquals(expected, HttpTestClient.tokenIds(r));
        assertTrue(ms < 5_000, "the retry waited " + ms + " ms: the disconnect should fail the prefill at once");
        awaitGone("py-prefill-2");
    }

    @Test
    void heartbeatsCarryTheLoadAndSilenceRemovesTheWorker() throws Exception {
        try (FakeExternalWorker worker = new FakeExternalWorker(port, engine)) {
            worker.join("decode", "py-decode-3");
            // Heartbeats for 1.5 idle periods: still registered, with the load it reported.
            for (int i = 0; i < 8; i++) {
                worker.heartbeat(3, false);
                Thread.sleep(200);
            }
            WorkerDescriptor d = descriptor("py-decode-3");
            assertEquals(3, d.load().activeSequences());
            assertEquals(WorkerRole.DECODE, d.role());
            assertEquals(engine.info().fingerprint(), d.modelFingerprint());
            worker.heartbeat(3, true);
            TestNodes.awaitTrue(
                    () -> descriptor("py-decode-3") != null
                            && descriptor("py-decode-3").draining(),
                    "the draining heartbeat to reach the registry");
            // Then silence: the bridge closes the connection after the idle timeout and the entry goes.
            assertTrue(worker.client.awaitClosed(), "the bridge should close a silent worker's connection");
            awaitGone("py-decode-3");
        }
    }

    @Test
    void metricsCountJoinedWorkersAndRefusedFrames() throws Exception {
        try (FakeExternalWorker worker = new FakeExternalWorker(port, engine)) {
            worker.join("prefill", "py-metered");
            worker.client.write(send(Addresses.routerTokens("r"), new JsonObject()));
            worker.client.await(f -> "err".equals(f.getString("type")), "the refusal");
            String metrics = http.send(http.request("/metrics").GET().build()).body();
            assertTrue(metrics.contains("tandem_worker_bridge_workers 1.0"), metrics);
            assertTrue(
                    metrics.matches("(?s).*tandem_worker_bridge_refused_total\\{code=\"access_denied\",?\\} [1-9].*"),
                    "refusals are counted by code");
        }
        awaitGone("py-metered");
    }

    @Test
    void aWorkerThatLeavesWhileJoiningLeavesNoEntryBehind() throws Exception {
        // Closing 0-2.75 ms after the join lands in every step of it: the claim, the consumers, the announce.
        for (int i = 0; i < 40; i++) {
            try (BridgeTestClient c = BridgeTestClient.connect(port)) {
                c.write(new JsonObject()
                        .put("type", "send")
                        .put("address", Addresses.WORKER_JOIN)
                        .put("replyAddress", "join")
                        .put("body", FakeExternalWorker.joinBody("decode", engine, "py-ghost-" + i)));
                long until = System.nanoTime() + (i % 12) * 250_000L;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
            }
        }
        // Longer than a registry TTL (1 s here, plus Hazelcast's second): an entry still there is kept alive.
        Thread.sleep(3_000);
        List<String> ghosts = node.router().directory().workers(WorkerRole.DECODE).stream()
                .map(WorkerDescriptor::workerId)
                .filter(id -> id.startsWith("py-ghost-"))
                .toList();
        assertEquals(List.of(), ghosts, "workers that left while joining are still registered");
    }

    @Test
    void theRegistryKnowsAnIdOnlyOnce() throws Exception {
        try (FakeExternalWorker a = new FakeExternalWorker(port, engine);
                FakeExternalWorker b = new FakeExternalWorker(port, engine);
                FakeExternalWorker c = new FakeExternalWorker(port, engine)) {
            a.join("decode", "py-twin");
            JsonObject refused =
                    b.client.request(Addresses.WORKER_JOIN, FakeExternalWorker.joinBody("decode", engine, "py-twin"));
            assertEquals("worker_id_in_use", refused.getString("message"), refused.encode());
            // A Java worker's id is taken too: the registry is asked, not just this bridge.
            refused = c.client.request(
                    Addresses.WORKER_JOIN, FakeExternalWorker.joinBody("prefill", engine, "prefill-0"));
            assertEquals("worker_id_in_use", refused.getString("message"), refused.encode());
            JsonObject unnamed = b.join("prefill", null);
            assertTrue(unnamed.getString("worker_id").startsWith("ext-prefill-"), unnamed.encode());
        }
    }

    @Test
    void aWorkerOfOtherWeightsUnderARegisteredModelsNameIsRefused() throws Exception {
        try (FakeExternalWorker w = new FakeExternalWorker(port, engine)) {
            JsonObject join = FakeExternalWorker.joinBody("decode", engine, "py-impostor");
            join.put("model_fingerprint", engine.info().fingerprint() ^ 1);
            JsonObject refused = w.client.request(Addresses.WORKER_JOIN, join);
            assertEquals("model_conflict", refused.getString("message"), refused.encode());
            // Its claim on the id is withdrawn with the refusal.
            TestNodes.awaitTrue(
                    () -> node.router().directory().workers(WorkerRole.DECODE).stream()
                            .noneMatch(d -> d.workerId().equals("py-impostor")),
                    "the impostor to be out of the registry");
        }
    }

    @Test
    void aJoinWithoutTheTokenOrWithAnotherIsRefused() throws Exception {
        try (FakeExternalWorker w = new FakeExternalWorker(port, engine)) {
            JsonObject join = FakeExternalWorker.joinBody("prefill", engine, "rogue-prefill-1");
            join.remove("token");
            JsonObject none = w.client.request(Addresses.WORKER_JOIN, join);
            assertEquals("err", none.getString("type"), none.encode());
            assertEquals("unauthorized", none.getString("message"), none.encode());
            JsonObject wrong =
                    w.client.request(Addresses.WORKER_JOIN, join.copy().put("token", FakeExternalWorker.TOKEN + "x"));
            assertEquals("unauthorized", wrong.getString("message"), wrong.encode());
            // Nothing reaches a connection that has not joined: not a prompt, not a worker address.
            JsonObject after = w.client.request(Addresses.WORKER_HEARTBEAT, new JsonObject());
            assertEquals("not_joined", after.getString("message"), after.encode());
        }
        // On another connection: a connection is closed at its third failed join (WorkerBridgeFailedJoinsTest).
        try (FakeExternalWorker w = new FakeExternalWorker(port, engine)) {
            JsonObject join = FakeExternalWorker.joinBody("prefill", engine, "rogue-prefill-1");
            JsonObject prefix =
                    w.client.request(Addresses.WORKER_JOIN, join.put("token", FakeExternalWorker.TOKEN.substring(1)));
            assertEquals("unauthorized", prefix.getString("message"), prefix.encode());
        }
        assertTrue(
                node.router().directory().workers(WorkerRole.PREFILL).stream()
                        .noneMatch(p -> p.workerId().equals("rogue-prefill-1")),
                "the rogue worker is registered");
    }

    /** A frame sent by a joined decode worker, and the err code the bridge must answer it with. */
    record BadFrame(String name, JsonObject frame, String code) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<BadFrame> badFramesOfAJoinedWorker() {
        JsonObject tokens = new JsonObject().put("worker", "someone-else").put("events", new JsonArray());
        return Stream.of(
                new BadFrame(
                        "send to a Java worker",
                        send(Addresses.prefill("prefill-0"), new JsonObject()),
                        "access_denied"),
                new BadFrame("send to a client address", send("tandem.client.x", new JsonObject()), "access_denied"),
                new BadFrame(
                        "generate (a client's address)", send(Addresses.GENERATE, new JsonObject()), "access_denied"),
                new BadFrame("KV from a decode worker", send(Addresses.decodeKv("decode-0"), "AAAA"), "access_denied"),
                new BadFrame("tokens under another id", send(Addresses.routerTokens("r"), tokens), "access_denied"),
                new BadFrame(
                        "tokens that are not a batch",
                        send(Addresses.routerTokens("r"), new JsonObject()),
                        "invalid_body"),
                new BadFrame(
                        "register",
                        new JsonObject().put("type", "register").put("address", "tandem.x"),
                        "unsupported_type"),
                new BadFrame("a second join", send(Addresses.WORKER_JOIN, new JsonObject()), "already_joined"),
                new BadFrame(
                        "heartbeat without load",
                        send(Addresses.WORKER_HEARTBEAT, new JsonObject()),
                        "invalid_heartbeat"),
                new BadFrame(
                        "negative load",
                        send(
                                Addresses.WORKER_HEARTBEAT,
                                new JsonObject()
                                        .put(
                                                "load",
                                                new JsonObject()
                                                        .put("queued_prefill_tokens", -1)
                                                        .put("active_sequences", 0)
                                                        .put("kv_bytes_used", 0)
                                                        .put("kv_bytes_capacity", 0))),
                        "invalid_heartbeat"),
                new BadFrame(
                        "answer nobody awaits",
                        send(Addresses.BRIDGE_REPLY_PREFIX + "999", new JsonObject()),
                        "unknown_reply_address"),
                new BadFrame(
                        "unknown type", new JsonObject().put("type", "shout").put("address", "a"), "unknown_type"),
                new BadFrame("no address", new JsonObject().put("type", "send"), "missing_address"));
    }

    private static JsonObject send(String address, Object body) {
        return new JsonObject()
                .put("type", "send")
                .put("address", address)
                .put("body", body)
                .put("replyAddress", "r-1");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badFramesOfAJoinedWorker")
    void aBadFrameFromAJoinedWorkerGetsAnErrorAndHarmsNothing(BadFrame bad) throws Exception {
        try (FakeExternalWorker worker = new FakeExternalWorker(port, engine)) {
            worker.join("decode", "py-bad");
            TestNodes.awaitTrue(() -> descriptor("py-bad") != null, "py-bad in the router's registry view");
            worker.client.write(bad.frame());
            JsonObject err = worker.client.await(f -> "err".equals(f.getString("type")), "the err frame");
            assertEquals(bad.code(), err.getString("message"), err.encode());
            // The connection goes on, and so does the registry entry and the router.
            worker.client.write(new JsonObject().put("type", "ping"));
            assertEquals(
                    "pong",
                    worker.client
                            .await(f -> "pong".equals(f.getString("type")), "pong")
                            .getString("type"));
            assertTrue(descriptor("py-bad") != null, "the worker stays registered");
        }
        awaitGone("py-bad");
        JsonObject body = new JsonObject().put("prompt", "still here").put("max_tokens", 3);
        assertEquals(200, http.post("/v1/completions", body.encode()).statusCode());
    }

    static Stream<BadFrame> badJoins() {
        return Stream.of(
                new BadFrame("not joined yet", send(Addresses.routerTokens("r"), new JsonObject()), "not_joined"),
                new BadFrame(
                        "join without role",
                        send(Addresses.WORKER_JOIN, new JsonObject().put("model", "m")),
                        "invalid_join"),
                new BadFrame("join with a string body", send(Addresses.WORKER_JOIN, "decode"), "invalid_join"),
                new BadFrame(
                        "unknown role",
                        send(Addresses.WORKER_JOIN, joinOf("router", "tandem-builtin", "w")),
                        "invalid_join"),
                new BadFrame(
                        "another model",
                        send(Addresses.WORKER_JOIN, joinOf("decode", "llama-70b", "w")),
                        "model_mismatch"),
                new BadFrame(
                        "an id that is no address",
                        send(Addresses.WORKER_JOIN, joinOf("decode", "tandem-builtin", "a b")),
                        "invalid_join"),
                new BadFrame(
                        "max_batch 0",
                        send(
                                Addresses.WORKER_JOIN,
                                joinOf("decode", "tandem-builtin", "w").put("max_batch", 0)),
                        "invalid_join"));
    }

    private static JsonObject joinOf(String role, String model, String id) {
        return new JsonObject()
                .put("token", FakeExternalWorker.TOKEN)
                .put("role", role)
                .put("model", model)
                .put("model_fingerprint", 1)
                .put("max_batch", 4)
                .put("worker_id", id);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badJoins")
    void aBadJoinIsRefusedAndTheConnectionMayTryAgain(BadFrame bad) throws Exception {
        try (FakeExternalWorker worker = new FakeExternalWorker(port, engine)) {
            worker.client.write(bad.frame());
            JsonObject err = worker.client.await(f -> "r-1".equals(f.getString("address")), "the refusal");
            assertEquals("err", err.getString("type"), err.encode());
            assertEquals(bad.code(), err.getString("message"), err.encode());
            assertEquals("py-retry", worker.join("decode", "py-retry").getString("worker_id"));
        }
        awaitGone("py-retry");
    }

    /** What the Java workers answer for the same request: external workers must answer exactly that. */
    private int[] javaAnswer(JsonObject body) {
        HttpResponse<String> r = http.post("/v1/completions", body.encode());
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(
                "decode-0", r.headers().firstValue("X-Tandem-Decode-Worker").orElse(null));
        return HttpTestClient.tokenIds(r);
    }

    private WorkerDescriptor descriptor(String id) {
        return node.router().directory().workers(WorkerRole.PREFILL).stream()
                .filter(w -> w.workerId().equals(id))
                .findFirst()
                .or(() -> node.router().directory().workers(WorkerRole.DECODE).stream()
                        .filter(w -> w.workerId().equals(id))
                        .findFirst())
                .orElse(null);
    }

    private void awaitGone(String id) {
        TestNodes.awaitTrue(() -> descriptor(id) == null, id + " to leave the registry");
    }

    private void drain(String worker, boolean draining) {
        HttpResponse<String> r = http.post(
                "/admin/workers/" + worker + "/drain",
                new JsonObject().put("draining", draining).encode());
        assertEquals(200, r.statusCode(), r.body());
        TestNodes.awaitTrue(
                () -> descriptor(worker) != null && descriptor(worker).draining() == draining,
                worker + " draining=" + draining);
    }
}
