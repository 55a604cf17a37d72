package dev.tandem.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Environment variables over the file, every documented key really read, and errors that name their source. */
class EnvOverridesTest {
    private static final JsonObject SHIPPED = ConfigLoader.readYaml(Path.of("conf", "tandem.yaml"), true);

    @Test
    void anEnvironmentVariableWinsOverTheFile() {
        JsonObject file =
                new JsonObject().put("http", new JsonObject().put("port", 9000).put("host", "127.0.0.1"));
        TandemConfig c = EnvOverrides.apply(
                        file,
                        Map.of(
                                "TANDEM_HTTP_PORT",
                                "9100",
                                "TANDEM_ROUTER_MAX_IN_FLIGHT",
                                "7",
                                "TANDEM_CLUSTER_MEMBERS",
                                "10.0.0.1:5701, 10.0.0.2:5701",
                                "TANDEM_MODEL_EMULATED_DECODE_STEP_US",
                                "2500",
                                "PATH",
                                "/usr/bin",
                                "TANDEMX",
                                "ignored"))
                .parse();
        assertEquals(9100, c.http().port());
        assertEquals("127.0.0.1", c.http().host());
        assertEquals(7, c.router().maxInFlight());
        assertEquals(List.of("10.0.0.1:5701", "10.0.0.2:5701"), c.cluster().members());
        assertEquals(2500, c.model().emulatedDecodeStepMicros());
        assertEquals(9000, EnvOverrides.apply(file, Map.of()).parse().http().port(), "the file is not changed");
    }

    @Test
    void aSectionWithADashIsMatchedBeforeAShorterOne() {
        // worker-bridge.tcp-port, not worker.bridge-tcp-port: the longest section name wins.
        TandemConfig c = EnvOverrides.apply(
                        new JsonObject(),
                        Map.of(
                                "TANDEM_WORKER_BRIDGE_TCP_PORT", "7001",
                                "TANDEM_WORKER_MAX_BATCH", "9"))
                .parse();
        assertEquals(7001, c.workerBridge().tcpPort());
        assertEquals(9, c.worker().maxBatch());
    }

    @Test
    void thePolicyIsAStringKey() {
        TandemConfig c = EnvOverrides.apply(SHIPPED, Map.of("TANDEM_ROUTER_POLICY", "least-loaded"))
                .parse();
        assertEquals("least-loaded", c.router().policy());
        assertEquals(
                SchedulingPolicy.named("least-loaded").prefill(), c.router().prefill());
        assertEquals(SchedulingPolicy.named("least-loaded").decode(), c.router().decode());
        ConfigException unknown = assertThrows(
                ConfigException.class,
                () -> EnvOverrides.apply(SHIPPED, Map.of("TANDEM_ROUTER_POLICY", "fastest"))
                        .parse());
        assertTrue(
                unknown.getMessage().contains("router.policy")
                        && unknown.getMessage().contains("round-robin")
                        && unknown.getMessage().contains("TANDEM_ROUTER_POLICY"),
                unknown.getMessage());
    }

    @Test
    void aMistypedVariableFailsWithItsName() {
        ConfigException unknownKey = assertThrows(
                ConfigException.class,
                () -> EnvOverrides.apply(new JsonObject(), Map.of("TANDEM_HTTP_PROT", "1"))
                        .parse());
        assertTrue(
                unknownKey.getMessage().contains("http.prot")
                        && unknownKey.getMessage().contains("TANDEM_HTTP_PROT"),
                unknownKey.getMessage());
        ConfigException badValue = assertThrows(
                ConfigException.class,
                () -> EnvOverrides.apply(new JsonObject(), Map.of("TANDEM_WORKER_MAX_BATCH", "lots"))
                        .parse());
        assertTrue(
                badValue.getMessage().contains("worker.max-batch")
                        && badValue.getMessage().contains("TANDEM_WORKER_MAX_BATCH"),
                badValue.getMessage());
    }

    @Test
    void kubernetesServiceLinksAreNotConfiguration() {
        // What Kubernetes injects for Services named tandem-router and tandem-http in the namespace.
        TandemConfig c = EnvOverrides.apply(
                        new JsonObject(),
                        Map.of(
                                "TANDEM_ROUTER_SERVICE_HOST",
                                "10.96.0.12",
                                "TANDEM_ROUTER_SERVICE_PORT",
                                "80",
                                "TANDEM_ROUTER_SERVICE_PORT_HTTP",
                                "80",
                                "TANDEM_ROUTER_PORT",
                                "tcp://10.96.0.12:80",
                                "TANDEM_ROUTER_PORT_80_TCP",
                                "tcp://10.96.0.12:80",
                                "TANDEM_ROUTER_PORT_80_TCP_ADDR",
                                "10.96.0.12",
                                "TANDEM_HTTP_PORT_80_TCP_PROTO",
                                "tcp"))
                .parse();
        assertEquals(TandemConfig.defaults(), c);
    }

    @Test
    void variablesOutsideTheSectionsAreNotConfiguration() {
        TandemConfig c = EnvOverrides.apply(
                        new JsonObject(), Map.of("TANDEM_JAR", "/x.jar", "TANDEM_HTTP", "1", "TANDEM_SERVER_LOG", "1"))
                .parse();
        assertEquals(TandemConfig.defaults(), c);
    }

    /** Every leaf key of the shipped file, as a path. */
    static Stream<List<String>> shippedKeys() {
        List<List<String>> out = new ArrayList<>();
        collect(SHIPPED, new ArrayList<>(), out);
        return out.stream();
    }

    private static void collect(JsonObject json, List<String> path, List<List<String>> out) {
        for (String k : json.fieldNames()) {
            List<String> p = new ArrayList<>(path);
            p.add(k);
            if (json.getValue(k) instanceof JsonObject o && !o.isEmpty()) {
                collect(o, p, out);
            } else {
                out.add(p);
            }
        }
    }

    /**
     * Every documented key is read and checked by the code: a value of the wrong shape in its place
     * fails start-up naming that key (a key the code ignored would pass silently).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("shippedKeys")
    void everyDocumentedKeyIsRead(List<String> path) {
        JsonObject json = SHIPPED.copy();
        JsonObject parent = json;
        for (String p : path.subList(0, path.size() - 1)) {
            parent = parent.getJsonObject(p);
        }
        parent.put(path.get(path.size() - 1), new JsonObject().put("not", "a valid value"));
        ConfigException e =
                assertThrows(ConfigException.class, () -> TandemConfig.fromJson(json), String.join(".", path));
        assertTrue(e.getMessage().contains(path.get(path.size() - 1)), e.getMessage());
    }
}
