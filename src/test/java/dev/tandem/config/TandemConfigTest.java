package dev.tandem.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TandemConfigTest {

    @Test
    void shippedYamlParsesAndEqualsTheDefaults() {
        JsonObject yaml = ConfigLoader.readYaml(Path.of("conf", "tandem.yaml"), true);
        assertEquals(
                TandemConfig.defaults(),
                TandemConfig.fromJson(yaml),
                "conf/tandem.yaml documents the defaults; the two must not drift apart");
    }

    @Test
    void engineOpenaiReadsItsUpstream() {
        ModelSettings m = TandemConfig.fromJson(new JsonObject()
                        .put(
                                "model",
                                new JsonObject()
                                        .put("engine", "openai")
                                        .put("upstream-url", "http://vllm-prefill-0:8000/")
                                        .put("upstream-protocol", "sglang")
                                        .put("upstream-timeout-ms", 5000)
                                        .put("upstream-bootstrap-port", 9001)))
                .model();
        assertTrue(m.openai());
        assertEquals("vllm-prefill-0", m.upstream().uri().getHost());
        assertEquals("http://vllm-prefill-0:8000", m.upstream().uri().toString());
        assertTrue(m.upstream().sglang());
        assertEquals(5000, m.upstream().timeoutMs());
        assertEquals("vllm-prefill-0", m.upstream().bootstrapHostOrUrlHost());
        assertEquals(9001, m.upstream().bootstrapPort());
    }

    @Test
    void valuesAreRead() {
        TandemConfig c = TandemConfig.fromJson(new JsonObject()
                .put("http", new JsonObject().put("port", 9090))
                .put(
                        "worker",
                        new JsonObject().put("max-kv-transfer-bytes", 4096).put("kv-block-size", 32))
                .put(
                        "router",
                        new JsonObject()
                                .put(
                                        "decode-scheduling",
                                        new JsonObject()
                                                .put(
                                                        "scorers",
                                                        new io.vertx.core.json.JsonArray()
                                                                .add(new JsonObject()
                                                                        .put("plugin", "least-loaded"))))));
        assertEquals(9090, c.http().port());
        assertEquals(4096, c.worker().maxKvTransferBytes());
        assertEquals(32, c.worker().kvBlockSize());
        assertEquals("least-loaded", c.router().decode().scorers().get(0).plugin());
    }

    @Test
    void aPolicyAndAFilterWithParametersAreRead() {
        TandemConfig c = TandemConfig.fromJson(new JsonObject("""
                {"router": {"policy": "seed", "prefill-scheduling": {"filters": [
                    "not-draining", {"plugin": "load-threshold", "max-active-sequences": 8}]}}}
                """));
        assertEquals("seed", c.router().policy());
        assertEquals(
                List.of(
                        new SchedulerSettings.NamedFilter("not-draining"),
                        new SchedulerSettings.LoadThreshold(65_536, 8, 0.95)),
                c.router().prefill().filters());
        assertEquals(
                SchedulingPolicy.named("seed").prefill().scorers(),
                c.router().prefill().scorers());
        assertEquals(SchedulingPolicy.named("seed").decode(), c.router().decode());
        assertEquals("default", TandemConfig.defaults().router().policy());
    }

    static Stream<Arguments> badConfigs() {
        return Stream.of(
                Arguments.of(new JsonObject().put("htp", new JsonObject()), "htp"),
                Arguments.of(new JsonObject().put("http", new JsonObject().put("prot", 1)), "http.prot"),
                Arguments.of(new JsonObject().put("http", new JsonObject().put("port", "eighty")), "http.port"),
                Arguments.of(new JsonObject().put("http", new JsonObject().put("port", 70000)), "http.port"),
                Arguments.of(new JsonObject().put("worker", new JsonObject().put("max-batch", 0)), "worker.max-batch"),
                Arguments.of(new JsonObject().put("worker", "big"), "worker"),
                Arguments.of(
                        new JsonObject().put("model", new JsonObject().put("engine", "openai")), "model.upstream-url"),
                Arguments.of(
                        new JsonObject()
                                .put(
                                        "model",
                                        new JsonObject()
                                                .put("engine", "openai")
                                                .put("upstream-url", "http://gpu-0:8000")
                                                .put("upstream-protocol", "tgi")),
                        "model.upstream-protocol"),
                Arguments.of(
                        new JsonObject()
                                .put(
                                        "model",
                                        new JsonObject().put("engine", "openai").put("upstream-url", "gpu-0:8000")),
                        "model.upstream-url"),
                Arguments.of(
                        new JsonObject()
                                .put(
                                        "router",
                                        new JsonObject()
                                                .put(
                                                        "prefill-scheduling",
                                                        new JsonObject()
                                                                .put(
                                                                        "scorers",
                                                                        new io.vertx.core.json.JsonArray()
                                                                                .add(new JsonObject()
                                                                                        .put("plugn", "x"))))),
                        "plugn"),
                Arguments.of(new JsonObject().put("router", new JsonObject().put("policy", "fair")), "router.policy"),
                Arguments.of(new JsonObject("""
                                {"router": {"decode-scheduling": {"filters": [
                                    {"plugin": "load-threshold", "max-kv-utilization": 2}]}}}
                                """), "router.decode-scheduling.filters[0].max-kv-utilization"));
    }

    @ParameterizedTest
    @MethodSource("badConfigs")
    void badConfigurationNamesTheKey(JsonObject json, String key) {
        ConfigException e = assertThrows(ConfigException.class, () -> TandemConfig.fromJson(json));
        assertTrue(e.getMessage().contains(key), e.getMessage());
    }
}
