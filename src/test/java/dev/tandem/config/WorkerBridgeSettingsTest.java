package dev.tandem.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A listening worker bridge requires a join token; only an explicit development switch on loopback waives it. */
class WorkerBridgeSettingsTest {
    private static final String TOKEN = "0123456789abcdef";

    private static WorkerBridgeSettings parse(JsonObject section) {
        return TandemConfig.fromJson(new JsonObject().put("worker-bridge", section))
                .workerBridge();
    }

    @Test
    void offItNeedsNothing() {
        assertNull(TandemConfig.defaults().workerBridge().refusal());
    }

    @Test
    void listeningWithoutATokenIsRefusedEvenOnLoopback() {
        String why = parse(new JsonObject().put("tcp-port", 0)).refusal();
        assertNotNull(why);
        assertTrue(why.contains("worker-bridge.token"), why);
        assertNull(
                parse(new JsonObject().put("tcp-port", 0).put("token", TOKEN)).refusal());
        assertNull(EnvOverrides.apply(
                        new JsonObject(),
                        Map.of("TANDEM_WORKER_BRIDGE_TCP_PORT", "7001", "TANDEM_WORKER_BRIDGE_TOKEN", TOKEN))
                .parse()
                .workerBridge()
                .refusal());
    }

    @Test
    void theDevelopmentSwitchHoldsOnLoopbackOnly() {
        JsonObject dev = new JsonObject().put("tcp-port", 0).put("allow-no-token", true);
        assertNull(parse(dev.copy()).refusal());
        assertNull(parse(dev.copy().put("host", "::1")).refusal());
        String why = parse(dev.copy().put("host", "0.0.0.0")).refusal();
        assertNotNull(why);
        assertTrue(why.contains("loopback"), why);
        assertNotNull(parse(dev.copy().put("host", "10.0.0.5")).refusal());
        assertNotNull(parse(dev.copy().put("host", "localhost.example.com")).refusal());
    }

    @Test
    void aRouterNodeWhoseWorkerBridgeHasNoTokenRefusesToStart() {
        TandemConfig config = dev.tandem.TestNodes.config();
        TandemConfig noToken = config.withWorkerBridge(config.workerBridge().withTcpPort(0));
        RuntimeException e = assertThrows(
                RuntimeException.class,
                () -> dev.tandem.node.TandemNode.start(
                        noToken, new dev.tandem.node.TandemNode.Plan(true, List.of(), List.of())));
        assertTrue(String.valueOf(e.getMessage()).contains("worker-bridge.token"), String.valueOf(e));
    }

    @Test
    void failedJoinLimitsHaveDefaultsAndRanges() {
        assertEquals(
                new WorkerBridgeSettings.FailedJoins(3, 10, 60_000),
                TandemConfig.defaults().workerBridge().failedJoins());
        assertEquals(
                new WorkerBridgeSettings.FailedJoins(1, 50, 5_000),
                parse(new JsonObject()
                                .put("max-failed-joins-per-connection", 1)
                                .put("max-failed-joins-per-address", 50)
                                .put("failed-join-window-ms", 5_000))
                        .failedJoins());
        for (String key :
                List.of("max-failed-joins-per-connection", "max-failed-joins-per-address", "failed-join-window-ms")) {
            ConfigException e = assertThrows(ConfigException.class, () -> parse(new JsonObject().put(key, 0)));
            assertTrue(e.getMessage().contains("worker-bridge." + key), e.getMessage());
        }
    }

    @Test
    void aShortTokenStopsStartUp() {
        ConfigException e = assertThrows(ConfigException.class, () -> parse(new JsonObject().put("token", "short")));
        assertTrue(e.getMessage().contains("worker-bridge.token"), e.getMessage());
    }
}
