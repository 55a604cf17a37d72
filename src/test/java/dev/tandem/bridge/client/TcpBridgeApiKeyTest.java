package dev.tandem.bridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.bridge.BridgeTestClient;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * With {@code http.api-keys} set, the TCP bridge wants the key in every frame's headers as SockJS does
 * (a frame without one got a full generation before); and with {@code http.metrics-public: false},
 * {@code /metrics} and {@code /ready} want it too while {@code /health} stays open.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TcpBridgeApiKeyTest {
    private static final String KEY = "sk-tcp-bridge-test";
    private static final JsonObject WITH_KEY = new JsonObject().put("authorization", "Bearer " + KEY);
    private TandemNode node;
    private int port;
    private HttpTestClient http;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        config = config.withHttp(
                        TestSettings.withMetricsPublic(TestSettings.withApiKeys(config.http(), List.of(KEY)), false))
                .withBridge(config.bridge().withTcpPort(0));
        node = TestNodes.startEmbedded(config, 1, 1);
        port = node.router().bridge().tcpPort();
        http = new HttpTestClient(node.router().httpPort());
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private static JsonObject generate(String streamTo) {
        return new JsonObject()
                .put("prompt", "hi")
                .put("max_tokens", 5)
                .put("temperature", 0)
                .put("stream_to", streamTo);
    }

    @Test
    void aClientWithoutTheKeyIsRefusedEveryFrame() throws Exception {
        try (BridgeTestClient c = BridgeTestClient.connect(port)) {
            // The payload: a send without any key, with stream_to, got a generation.
            c.write(new JsonObject()
                    .put("type", "send")
                    .put("address", Addresses.GENERATE)
                    .put("replyAddress", "r1")
                    .put("body", generate(c.address)));
            JsonObject refused = c.await(f -> "r1".equals(f.getString("address")), "the refusal");
            assertEquals("err", refused.getString("type"), refused.encode());
            assertEquals("unauthorized", refused.getString("message"), refused.encode());
            for (JsonObject headers : new JsonObject[] {
                new JsonObject().put("authorization", "Bearer wrong"),
                new JsonObject().put("authorization", KEY),
                new JsonObject().put("x-api-key", KEY)
            }) {
                c.write(new JsonObject()
                        .put("type", "register")
                        .put("address", c.address)
                        .put("headers", headers)
                        .put("replyAddress", "r2"));
                JsonObject err = c.await(f -> "r2".equals(f.getString("address")), "the refusal");
                assertEquals("unauthorized", err.getString("message"), err.encode());
            }
            // A ping carries nothing and needs no key.
            c.write(new JsonObject().put("type", "ping"));
            assertEquals(
                    "pong",
                    c.await(f -> "pong".equals(f.getString("type")), "pong").getString("type"));
            assertTrue(c.silentFor(Duration.ofMillis(300)), "nothing was generated for the refused client");
        }
        assertEquals(0, node.router().requests().activeRequests());
    }

    @Test
    void aClientWithTheKeyIsServed() throws Exception {
        try (BridgeTestClient c = BridgeTestClient.connect(port)) {
            c.write(new JsonObject()
                    .put("type", "register")
                    .put("address", c.address)
                    .put("headers", WITH_KEY));
            JsonObject frame = new JsonObject()
                    .put("type", "send")
                    .put("address", Addresses.GENERATE)
                    .put("replyAddress", "ok")
                    .put("headers", new JsonObject().put("Authorization", "Bearer " + KEY))
                    .put("body", generate(c.address));
            c.write(frame);
            JsonObject reply = c.await(f -> "ok".equals(f.getString("address")), "the reply");
            assertEquals("message", reply.getString("type"), reply.encode());
            String id = reply.getJsonObject("body").getString("id");
            assertEquals("length", c.collect(id).last().getString("finish_reason"));
        }
    }

    @Test
    void metricsAndReadinessNeedTheKeyWhenNotPublicAndHealthDoesNot() {
        assertEquals(401, http.send(http.request("/metrics").GET().build()).statusCode());
        assertEquals(401, http.send(http.request("/ready").GET().build()).statusCode());
        assertEquals(200, http.send(http.request("/health").GET().build()).statusCode());
        assertEquals(
                200,
                http.send(http.request("/metrics")
                                .header("Authorization", "Bearer " + KEY)
                                .GET()
                                .build())
                        .statusCode());
        String body = http.send(http.request("/ready").GET().build()).body();
        assertNull(new JsonObject(body).getJsonObject("error").getString("param"), body);
    }
}
