package dev.tandem.bridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * With {@code http.api-keys} set: the console's files stay open (they hold no data), the API wants its
 * header as before, and every SockJS frame that sends or registers must carry the key in its headers
 * ({@code authorization: Bearer <key>}), since a browser's WebSocket cannot send HTTP headers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SockJsApiKeyTest {
    private static final String KEY = "sk-console-test";
    private static final JsonObject WITH_KEY = new JsonObject().put("Authorization", "Bearer " + KEY);
    private TandemNode node;
    private int port;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        node = TandemNode.start(
                config.withHttp(TestSettings.withApiKeys(config.http(), List.of(KEY))), TandemNode.Plan.embedded(1, 1));
        TestNodes.awaitWorkers(node.router(), 1, 1);
        port = node.router().httpPort();
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    @Test
    void theConsoleIsOpenAndTheApiIsNot() {
        HttpTestClient http = new HttpTestClient(port);
        assertEquals(200, http.send(http.request("/").GET().build()).statusCode());
        assertEquals(
                200,
                http.send(http.request("/vendor/vertx-eventbus.js").GET().build())
                        .statusCode());
        assertEquals(
                200, http.send(http.request("/eventbus/info").GET().build()).statusCode());
        // http.metrics-public defaults to true: scrapers and probes need no key.
        assertEquals(200, http.send(http.request("/metrics").GET().build()).statusCode());
        assertEquals(200, http.send(http.request("/health").GET().build()).statusCode());
        assertEquals(401, http.send(http.request("/v1/models").GET().build()).statusCode());
        assertEquals(
                401, http.send(http.request("/admin/workers").GET().build()).statusCode());
        assertEquals(
                200,
                http.send(http.request("/v1/models")
                                .header("Authorization", "Bearer " + KEY)
                                .GET()
                                .build())
                        .statusCode());
    }

    @Test
    void framesWithoutTheKeyAreRefused() throws Exception {
        try (SockJsTestClient c = SockJsTestClient.connect(port)) {
            for (JsonObject headers : new JsonObject[] {
                null, new JsonObject().put("authorization", "Bearer wrong"), new JsonObject().put("authorization", KEY)
            }) {
                c.write(new JsonObject()
                        .put("type", "register")
                        .put("address", Addresses.CONSOLE_CLUSTER)
                        .put("headers", headers));
                JsonObject refused =
                        c.await(f -> Addresses.CONSOLE_CLUSTER.equals(f.getString("address")), "the refusal");
                assertEquals("err", refused.getString("type"), refused.encode());
                assertEquals("unauthorized", refused.getString("body"), refused.encode());
                assertEquals("rejected", c.awaitErr().getString("body"));

                c.write(new JsonObject()
                        .put("type", "send")
                        .put("address", Addresses.GENERATE)
                        .put("headers", headers)
                        .put("body", new JsonObject().put("prompt", "x")));
                assertEquals("unauthorized", c.awaitErr().getString("body"));
                assertEquals("rejected", c.awaitErr().getString("body"));
            }
            c.write(new JsonObject().put("type", "ping"));
            c.write(new JsonObject()
                    .put("type", "register")
                    .put("address", c.address)
                    .put("headers", WITH_KEY));
            c.write(new JsonObject()
                    .put("type", "register")
                    .put("address", Addresses.CONSOLE_CLUSTER)
                    .put("headers", WITH_KEY));
            JsonObject snapshot = c.await(f -> Addresses.CONSOLE_CLUSTER.equals(f.getString("address")), "a snapshot");
            assertEquals("rec", snapshot.getString("type"), snapshot.encode());
            String replyAddress = java.util.UUID.randomUUID().toString();
            c.write(new JsonObject()
                    .put("type", "send")
                    .put("address", Addresses.GENERATE)
                    .put("headers", WITH_KEY)
                    .put("replyAddress", replyAddress)
                    .put(
                            "body",
                            new JsonObject()
                                    .put("prompt", "keyed")
                                    .put("max_tokens", 3)
                                    .put("temperature", 0)
                                    .put("stream_to", c.address)));
            JsonObject reply = c.await(f -> replyAddress.equals(f.getString("address")), "the reply");
            assertEquals("rec", reply.getString("type"), reply.encode());
            assertEquals(
                    "length",
                    c.collect(reply.getJsonObject("body").getString("id"))
                            .last()
                            .getString("finish_reason"));
        }
    }
}
