package dev.tandem.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code scaling}: the targets of the scaling signals, from the file and from the environment. */
class ScalingSettingsTest {

    @Test
    void defaults() {
        assertEquals(ScalingSettings.DEFAULTS, TandemConfig.defaults().scaling());
    }

    @Test
    void fromTheFile() {
        ScalingSettings s = TandemConfig.fromJson(new JsonObject("""
                        {"scaling": {"target-queue-ms": 500, "target-prefill-utilization": 0.6,
                          "target-batch-occupancy": 0.9, "target-kv-use": 0.7, "window-seconds": 60,
                          "min-workers": 2, "prior-prefill-tokens-per-second": 8000}}
                        """)).scaling();
        assertEquals(new ScalingSettings(500, 0.6, 0.9, 0.7, 60, 2, 8000), s);
    }

    @Test
    void fromTheEnvironment() {
        ScalingSettings s = EnvOverrides.apply(
                        new JsonObject(),
                        Map.of("TANDEM_SCALING_TARGET_KV_USE", "0.6", "TANDEM_SCALING_MIN_WORKERS", "0"))
                .parse()
                .scaling();
        assertEquals(0.6, s.targetKvUse());
        assertEquals(0, s.minWorkers());
    }

    static Stream<Arguments> badValues() {
        return Stream.of(
                Arguments.of("target-prefill-utilization", 1.5, "must be between 0.05 and 1.0, got 1.5"),
                Arguments.of("target-kv-use", 0, "must be between 0.05 and 1.0, got 0.0"),
                Arguments.of("target-batch-occupancy", "most", "must be a number, got 'most'"),
                Arguments.of("target-queue-ms", 0, "must be between 10 and 600000, got 0"),
                Arguments.of("window-seconds", -5, "must be between 1 and 3600, got -5"),
                Arguments.of("min-workers", "two", "must be an integer, got 'two'"),
                Arguments.of("target-utilisation", 0.5, "target-utilisation"));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("badValues")
    void aBadValueNamesTheKeyAndWhy(String key, Object value, String why) {
        JsonObject json = new JsonObject().put("scaling", new JsonObject().put(key, value));
        ConfigException e = assertThrows(ConfigException.class, () -> TandemConfig.fromJson(json));
        assertTrue(e.getMessage().contains("'scaling." + key + "'"), e.getMessage());
        assertTrue(e.getMessage().contains(why), e.getMessage());
    }

    @Test
    void aBadValueFromTheEnvironmentNamesTheVariable() {
        ConfigException e = assertThrows(
                ConfigException.class,
                () -> EnvOverrides.apply(new JsonObject(), Map.of("TANDEM_SCALING_TARGET_QUEUE_MS", "soon"))
                        .parse());
        assertTrue(e.getMessage().contains("'scaling.target-queue-ms' must be an integer, got 'soon'"), e.getMessage());
        assertTrue(e.getMessage().contains("TANDEM_SCALING_TARGET_QUEUE_MS"), e.getMessage());
    }
}
