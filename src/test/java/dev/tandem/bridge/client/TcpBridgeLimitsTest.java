package dev.tandem.bridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.bridge.BridgeTestClient;
import dev.tandem.config.ConnectionLimits;
import dev.tandem.config.TandemConfig;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The TCP bridge's connection limit (issue 33): the connection over it gets an err frame saying why, then EOF. */
@Timeout(60)
class TcpBridgeLimitsTest {
    private TandemNode node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    @Test
    void aConnectionOverTheLimitIsToldWhyAndClosedWhileTheOthersServe() throws Exception {
        TandemConfig config = TestNodes.config();
        config = config.withBridge(config.bridge().withTcpPort(0).withConnections(new ConnectionLimits(1, 0)));
        node = TestNodes.startEmbedded(config, 1, 1);
        int port = node.router().bridge().tcpPort();
        try (BridgeTestClient first = BridgeTestClient.connect(port)) {
            first.registerOwnAddress();
            try (BridgeTestClient second = BridgeTestClient.connect(port)) {
                JsonObject err = second.awaitErr();
                assertEquals("too_many_connections", err.getString("message"), err.encode());
                assertTrue(err.getString("detail").contains("bridge.max-connections"), err.encode());
                assertTrue(second.awaitClosed(), "the refused connection is closed");
            }
            JsonObject reply = first.request(
                    Addresses.GENERATE,
                    new JsonObject().put("prompt", "still").put("max_tokens", 2).put("stream_to", first.address));
            assertEquals("message", reply.getString("type"), reply.encode());
        }
        // Its place is given back: a new connection is admitted.
        TestNodes.awaitTrue(
                () -> {
                    try (BridgeTestClient again = BridgeTestClient.connect(port)) {
                        again.registerOwnAddress();
                        return again.silentFor(java.time.Duration.ofMillis(300));
                    } catch (Exception e) {
                        return false;
                    }
                },
                "a new connection admitted once the first closed");
    }
}
