package dev.tandem.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestTls;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The TLS keys of every surface and of the cluster (issue 33): what start-up accepts and what it refuses, why. */
class TlsSettingsTest {
    private static final String CERT = TestTls.pem("server");
    private static final String KEY = TestTls.pem("server-key");
    private static final String CA = TestTls.pem("ca");

    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("http", Map.of("tls-cert", CERT), "'http.tls-cert' and 'http.tls-key' go together"),
                Arguments.of("bridge", Map.of("tls-key", KEY), "'bridge.tls-cert' and 'bridge.tls-key' go together"),
                Arguments.of("worker-bridge", Map.of("tls-client-ca", CA), "'worker-bridge.tls-client-ca' needs"),
                Arguments.of("http", Map.of("tls-required", true), "'http.tls-required' is true but"),
                Arguments.of(
                        "http",
                        Map.of("tls-cert", "/nonexistent/cert.pem", "tls-key", KEY),
                        "'http.tls-cert' names /nonexistent/cert.pem, which is not a readable file"),
                Arguments.of("http", Map.of("plain-port", 8081), "'http.plain-port' is a clear-text listener beside"),
                Arguments.of("cluster", Map.of("tls-cert", CERT, "tls-key", KEY), "go together"),
                Arguments.of("http", Map.of("max-connections", -1), "'http.max-connections' must be between"));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("refused")
    void refusesWithTheKeyAndTheReason(String section, Map<String, Object> keys, String message) {
        JsonObject json = new JsonObject().put(section, new JsonObject(Map.copyOf(keys)));
        ConfigException e = assertThrows(ConfigException.class, () -> TandemConfig.fromJson(json));
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    @Test
    void readsEverySurfaceAndTheClusterFromTheEnvironment() {
        Map<String, String> env = Map.of(
                "TANDEM_HTTP_TLS_CERT", CERT,
                "TANDEM_HTTP_TLS_KEY", KEY,
                "TANDEM_HTTP_TLS_CLIENT_CA", CA,
                "TANDEM_HTTP_TLS_REQUIRED", "true",
                "TANDEM_BRIDGE_TLS_CERT", CERT,
                "TANDEM_BRIDGE_TLS_KEY", KEY,
                "TANDEM_WORKER_BRIDGE_TLS_CERT", CERT,
                "TANDEM_WORKER_BRIDGE_TLS_KEY", KEY,
                "TANDEM_CLUSTER_TLS_CERT", TestTls.pem("node"),
                "TANDEM_CLUSTER_TLS_KEY", TestTls.pem("node-key"));
        Map<String, String> withCa = new java.util.HashMap<>(env);
        withCa.put("TANDEM_CLUSTER_TLS_CA", TestTls.pem("cluster-ca"));
        withCa.put("TANDEM_HTTP_MAX_CONNECTIONS_PER_ADDRESS", "64");
        TandemConfig c = EnvOverrides.apply(new JsonObject(), withCa).parse();
        assertEquals(new TlsSettings(CERT, KEY, CA, true), c.http().tls());
        assertTrue(c.bridge().tls().enabled() && !c.bridge().tls().clientAuth());
        assertTrue(c.workerBridge().tls().enabled());
        assertEquals(TestTls.pem("cluster-ca"), c.cluster().tls().ca());
        assertEquals(new ConnectionLimits(16_384, 64), c.http().connections());
        ConfigException partial = assertThrows(
                ConfigException.class,
                () -> EnvOverrides.apply(new JsonObject(), env).parse());
        assertTrue(partial.getMessage().contains("cluster.tls-ca"), partial.getMessage());
        assertEquals(TlsSettings.NONE, TandemConfig.defaults().http().tls());
        assertEquals(ClusterTls.NONE, TandemConfig.defaults().cluster().tls());
    }
}
