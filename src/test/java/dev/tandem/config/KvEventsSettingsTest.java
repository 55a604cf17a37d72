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
import org.junit.jupiter.params.provider.ValueSource;

/** model.upstream-kv-events-*: read from the file or the environment, endpoints checked at start. */
class KvEventsSettingsTest {

    @Test
    void theEnvironmentSetsTheEventStream() {
        TandemConfig c = EnvOverrides.apply(
                        new JsonObject(),
                        Map.of(
                                "TANDEM_MODEL_UPSTREAM_KV_EVENTS_ENDPOINT", "tcp://10.0.0.7:5557",
                                "TANDEM_MODEL_UPSTREAM_KV_EVENTS_REPLAY_ENDPOINT", "tcp://10.0.0.7:5558",
                                "TANDEM_MODEL_UPSTREAM_KV_EVENTS_TOPIC", "kv"))
                .parse();
        KvEventsSettings events = c.model().upstream().kvEvents();
        assertEquals(new KvEventsSettings("tcp://10.0.0.7:5557", "tcp://10.0.0.7:5558", "kv"), events);
        assertTrue(events.enabled());
    }

    @Test
    void noneByDefault() {
        assertFalse(TandemConfig.defaults().model().upstream().kvEvents().enabled());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp://*:5557", "http://host:5557", "tcp://host", "5557"})
    void anEndpointTandemCannotConnectToIsRefusedNamingTheKey(String endpoint) {
        ConfigException e = assertThrows(ConfigException.class, () -> new KvEventsSettings(endpoint, "", ""));
        assertTrue(e.getMessage().contains("model.upstream-kv-events-endpoint"), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource({"tcp://127.0.0.1:5557", "tcp://vllm-0.vllm:5557", "tcp://[::1]:5557", "ipc:///tmp/kv"})
    void endpointsItCanConnectToAreAccepted(String endpoint) {
        assertEquals(endpoint, new KvEventsSettings(endpoint, "", "").endpoint());
    }

    @Test
    void aReplayEndpointNeedsTheStream() {
        assertThrows(ConfigException.class, () -> new KvEventsSettings("", "tcp://127.0.0.1:5558", ""));
    }
}
