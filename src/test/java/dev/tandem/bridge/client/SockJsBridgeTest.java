package dev.tandem.bridge.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.engine.Engine;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The SockJS bridge at /eventbus against a real router and workers, over its raw WebSocket endpoint:
 * generate streams what the HTTP API answers, the permissions and address ownership hold, a closed
 * socket or a dropped address ends its requests, and bad input is answered or closes that socket only.
 * The TCP bridge is off: the SockJS bridge does not depend on it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SockJsBridgeTest {
    private static final int LONG = 400;
    private final Engine reference = ReferenceEngine.builtin(16);
    private TandemNode node;
    private int port;
    private HttpTestClient http;

    @BeforeAll
    void start() {
        // 10 ms a decode step: a 400-token request is still running seconds later.
        node = TandemNode.start(TestNodes.config(), TandemNode.Plan.embedded(2, 2), new PacedEngine(reference, 10));
        TestNodes.awaitWorkers(node.router(), 2, 2);
        port = node.router().httpPort();
        http = new HttpTestClient(port);
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    @BeforeEach
    void idle() {
        awaitNothingRunning("the previous test's requests to end");
    }

    @Test
    void aCompletionStreamsExactlyWhatTheHttpApiAnswers() throws Exception {
        JsonObject body = new JsonObject()
                .put("prompt", "Over SockJS")
                .put("max_tokens", 24)
                .put("temperature", 0.8)
                .put("seed", 5);
        JsonObject expected = new JsonObject(ok(http.post("/v1/completions", body.encode())));
        assertEquals(-1, node.router().clientBridge().tcpPort(), "no TCP bridge in this test");
        try (SockJsTestClient c = SockJsTestClient.connect(port)) {
            c.registerOwnAddress();
            JsonObject reply = c.request(Addresses.GENERATE, body.copy().put("stream_to", c.address));
            assertEquals("rec", reply.getString("type"), reply.encode());
            String id = reply.getJsonObject("body").getString("id");
            assertTrue(id.matches("\\d+"), reply.encode());
            SockJsTestClient.Streamed s = c.collect(id);
            JsonObject choice = expected.getJsonArray("choices").getJsonObject(0);
            assertTrue(
                    s.bodies().size() > 2,
                    "tokens came in several frames: " + s.bodies().size());
            assertArrayEquals(ids(choice.getJsonArray("token_ids")), s.tokenIds());
            assertEquals(choice.getString("text"), s.text());
            assertEquals("length", s.last().getString("finish_reason"));
            assertEquals(expected.getJsonObject("usage"), s.last().getJsonObject("usage"));
        }
    }

    @Test
    void clientHeadersCannotForgeTheConnection() throws Exception {
        try (SockJsTestClient c = SockJsTestClient.connect(port)) {
            c.registerOwnAddress();
            // Were the client's header believed, 'stream_to' would not be registered on connection "forged".
            c.write(new JsonObject()
                    .put("type", "send")
                    .put("address", Addresses.GENERATE)
                    .put("replyAddress", "r-forged")
                    .put("headers", new JsonObject().put(ClientConnections.CONNECTION_HEADER, "forged"))
                    .put(
                            "body",
                            new JsonObject()
                                    .put("prompt", "mine")
                                    .put("max_tokens", 3)
                                    .put("temperature", 0)
                                    .put("stream_to", c.address)));
            JsonObject reply = c.await(f -> "r-forged".equals(f.getString("address")), "the reply");
            assertEquals("rec", reply.getString("type"), reply.encode());
            assertEquals(
                    "length",
                    c.collect(reply.getJsonObject("body").getString("id"))
                            .last()
                            .getString("finish_reason"));
        }
    }

    static Stream<String> unreachable() {
        return Stream.of(
                Addresses.prefill("prefill-1"),
                Addresses.decodeStart("decode-1"),
                Addresses.decodeKv("decode-1"),
                Addresses.workerDrain("decode-1"),
                Addresses.routerTokens("any"),
                Addresses.ROUTER_LOADS,
                Addresses.CONSOLE_CLUSTER,
                "tandem.client.someone-else");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("unreachable")
    void workerAndInternalAddressesAreOutOfReach(String address) throws Exception {
        try (SockJsTestClient c = SockJsTestClient.connect(port)) {
            for (String type : List.of("send", "publish")) {
                c.write(new JsonObject()
                        .put("type", type)
                        .put("address", address)
                        .put("body", new JsonObject().put("draining", true)));
                assertEquals("access_denied", c.awaitErr().getString("body"), type + " to " + address);
            }
            if (!Addresses.isClient(address) && !Addresses.CONSOLE_CLUSTER.equals(address)) {
                c.write(new JsonObject().put("type", "register").put("address", address));
                assertEquals("access_denied", c.awaitErr().getString("body"), "register of " + address);
            }
        }
        Thread.sleep(200);
        for (WorkerRole role : WorkerRole.values()) {
            for (WorkerDescriptor w : node.router().directory().workers(role)) {
                assertFalse(w.draining(), w.workerId() + " was reached through the bridge");
            }
        }
    }

    @Test
    void anAddressBelongsToOneSocket() throws Exception {
        try (SockJsTestClient c = SockJsTestClient.connect(port);
                SockJsTestClient other = SockJsTestClient.connect(port)) {
            c.registerOwnAddress();
            other.write(new JsonObject().put("type", "register").put("address", c.address));
            JsonObject refused = other.await(
                    f -> "err".equals(f.getString("type")) && c.address.equals(f.getString("address")), "the refusal");
            assertEquals("address_in_use", refused.getString("body"), refused.encode());
            assertEquals("rejected", other.awaitErr().getString("body"), "then the bridge's own refusal");
            // Nor may the other socket stream to it.
            JsonObject denied = other.request(
                    Addresses.GENERATE, new JsonObject().put("prompt", "x").put("stream_to", c.address));
            assertEquals(400, denied.getInteger("failureCode"), denied.encode());
            assertTrue(denied.getString("message").contains("not registered"), denied.encode());
            String id = c.generate(new JsonObject()
                    .put("prompt", "still mine")
                    .put("max_tokens", 2)
                    .put("temperature", 0));
            assertEquals("length", c.collect(id).last().getString("finish_reason"));
        }
    }

    @Test
    void closingTheSocketCancelsItsRequests() throws Exception {
        double cancelledBefore = cancelled();
        SockJsTestClient c = SockJsTestClient.connect(port);
        c.registerOwnAddress();
        String a = c.generate(runsLong("first of two"));
        String b = c.generate(runsLong("second of two"));
        c.await(
                f -> f.getJsonObject("body") != null
                        && b.equals(f.getJsonObject("body").getString("id")),
                "a token of b");
        assertTrue(node.router().clientBridge().sockJsSockets() >= 1);
        c.close();
        awaitNothingRunning("the closed socket's requests to be cancelled");
        assertEquals(cancelledBefore + 2, cancelled(), "both requests " + a + ", " + b + " ended as cancelled");
        TestNodes.awaitTrue(
                () -> node.router().clientBridge().sockJsSockets() == 0
                        && node.router().clientBridge().connections() == 0,
                "the socket to be forgotten");
    }

    @Test
    void unregisteringTheStreamAddressCancelsItsRequests() throws Exception {
        try (SockJsTestClient c = SockJsTestClient.connect(port)) {
            double cancelledBefore = cancelled();
            c.registerOwnAddress();
            String id = c.generate(runsLong("nobody listens"));
            c.await(
                    f -> f.getJsonObject("body") != null
                            && id.equals(f.getJsonObject("body").getString("id")),
                    "a token");
            c.write(new JsonObject().put("type", "unregister").put("address", c.address));
            awaitNothingRunning("the request of the unregistered address to be cancelled");
            assertEquals(cancelledBefore + 1, cancelled());
        }
    }

    @Test
    void cancelEndsTheStreamWithWhatWasSent() throws Exception {
        try (SockJsTestClient c = SockJsTestClient.connect(port)) {
            c.registerOwnAddress();
            String id = c.generate(runsLong("cancel me"));
            c.await(
                    f -> f.getJsonObject("body") != null
                            && id.equals(f.getJsonObject("body").getString("id")),
                    "a token");
            JsonObject cancelled = c.request(Addresses.CANCEL, new JsonObject().put("id", id));
            assertEquals(new JsonObject().put("id", id).put("cancelled", true), cancelled.getJsonObject("body"));
            assertEquals("cancelled", c.collect(id).last().getString("finish_reason"));
            awaitNothingRunning("the cancelled request to be gone");
        }
    }

    // ---- helpers ----

    private JsonObject runsLong(String prompt) {
        int[] tokens = reference.tokenizer().encode(prompt, true);
        for (long seed = 1; seed <= 200; seed++) {
            LocalGenerator.Result r = new LocalGenerator(reference)
                    .generate(tokens, new SamplingParams(0.9, 1.0, 0, seed), LONG, new int[0]);
            if (r.finishReason().equals("length")) {
                return new JsonObject()
                        .put("prompt", prompt)
                        .put("max_tokens", LONG)
                        .put("temperature", 0.9)
                        .put("seed", seed);
            }
        }
        throw new AssertionError("no seed in 1..200 makes '" + prompt + "' run " + LONG + " tokens");
    }

    private double cancelled() {
        return node.metrics()
                .registry()
                .counter("tandem.requests", "outcome", "cancelled")
                .count();
    }

    static String ok(java.net.http.HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    static int[] ids(JsonArray array) {
        return array.stream().mapToInt(v -> (Integer) v).toArray();
    }

    private void awaitNothingRunning(String what) {
        TestNodes.awaitTrue(
                () -> {
                    if (node.router().requests().activeRequests() != 0
                            || node.router().clientBridge().requests() != 0) {
                        return false;
                    }
                    for (String worker : List.of("decode-1", "decode-2")) {
                        WorkerLoad s = WorkerDescriptor.CODEC
                                .decode(node.vertx()
                                        .eventBus()
                                        .<JsonObject>request(Addresses.workerStatus(worker), null)
                                        .await()
                                        .body())
                                .load();
                        if (s.activeSequences() != 0 || s.kvBytesUsed() != 0) {
                            return false;
                        }
                    }
                    return true;
                },
                Duration.ofSeconds(5),
                what);
    }
}
