package dev.tandem.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code tracing.*} and {@code logging.*}, from the file and from {@code TANDEM_TRACING_*} / {@code TANDEM_LOGGING_*}. */
class TracingSettingsTest {

    @Test
    void offByDefault() {
        TandemConfig c = TandemConfig.defaults();
        assertFalse(c.tracing().enabled());
        assertEquals("http/protobuf", c.tracing().protocol());
        assertEquals(0.1, c.tracing().sampleRate());
        assertEquals("http://localhost:4318/v1/traces", c.tracing().exportUrl());
        assertFalse(c.logging().json());
    }

    @Test
    void fromTheEnvironment() {
        TandemConfig c = EnvOverrides.apply(
                        new JsonObject(),
                        Map.of(
                                "TANDEM_TRACING_ENABLED", "true",
                                "TANDEM_TRACING_ENDPOINT", "http://otel-collector:4317",
                                "TANDEM_TRACING_PROTOCOL", "grpc",
                                "TANDEM_TRACING_SAMPLE_RATE", "0.25",
                                "TANDEM_LOGGING_FORMAT", "json"))
                .parse();
        assertTrue(c.tracing().enabled());
        assertEquals("grpc", c.tracing().protocol());
        assertEquals("http://otel-collector:4317", c.tracing().exportUrl());
        assertEquals(0.25, c.tracing().sampleRate());
        assertTrue(c.logging().json());
    }

    @Test
    void eachProtocolHasItsDefaultEndpoint() {
        assertEquals(
                "http://localhost:4317",
                TracingSettings.OFF.withEndpoint("", "grpc").exportUrl());
        assertEquals(
                "http://localhost:4318/v1/traces",
                TracingSettings.OFF.withEndpoint("", "http/json").exportUrl());
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "protocol|zipkin|tracing.protocol",
                "sample-rate|1.5|tracing.sample-rate",
                "sample-rate|-0.1|tracing.sample-rate",
                "sample-rate|often|tracing.sample-rate",
                "endpoint|collector:4317|tracing.endpoint",
                "enabled|maybe|tracing.enabled",
                "sampler|always|sampler"
            })
    void badValuesAreRefusedByName(String key, String value, String named) {
        JsonObject json = new JsonObject().put("tracing", new JsonObject().put(key, value));
        ConfigException e = assertThrows(ConfigException.class, () -> TandemConfig.fromJson(json));
        assertTrue(e.getMessage().contains(named), e.getMessage());
    }

    @Test
    void anUnknownLogFormatIsRefused() {
        JsonObject json = new JsonObject().put("logging", new JsonObject().put("format", "xml"));
        ConfigException e = assertThrows(ConfigException.class, () -> TandemConfig.fromJson(json));
        assertTrue(e.getMessage().contains("logging.format"), e.getMessage());
    }
}
