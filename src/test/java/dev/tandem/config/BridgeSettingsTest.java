package dev.tandem.config;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code bridge.sockjs}: on by default, a boolean in the file, "true"/"false" from the environment. */
class BridgeSettingsTest {

    @Test
    void theSockJsBridgeIsOnByDefault() {
        assertTrue(TandemConfig.defaults().bridge().sockjs());
    }

    @Test
    void theFileAndTheEnvironmentTurnItOff() {
        assertFalse(TandemConfig.fromJson(new JsonObject().put("bridge", new JsonObject().put("sockjs", false)))
                .bridge()
                .sockjs());
        assertFalse(EnvOverrides.apply(new JsonObject(), Map.of("TANDEM_BRIDGE_SOCKJS", "false"))
                .parse()
                .bridge()
                .sockjs());
        assertTrue(EnvOverrides.apply(new JsonObject(), Map.of("TANDEM_BRIDGE_SOCKJS", "TRUE"))
                .parse()
                .bridge()
                .sockjs());
    }

    @Test
    void anythingElseStopsStartUpNamingTheKey() {
        ConfigException file = assertThrows(
                ConfigException.class,
                () -> TandemConfig.fromJson(new JsonObject().put("bridge", new JsonObject().put("sockjs", 1))));
        assertTrue(file.getMessage().contains("'bridge.sockjs'"), file.getMessage());
        ConfigException env = assertThrows(
                ConfigException.class,
                () -> EnvOverrides.apply(new JsonObject(), Map.of("TANDEM_BRIDGE_SOCKJS", "yes"))
                        .parse());
        assertTrue(env.getMessage().contains("TANDEM_BRIDGE_SOCKJS"), env.getMessage());
    }
}
