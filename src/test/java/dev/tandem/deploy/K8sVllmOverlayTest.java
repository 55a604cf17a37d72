package dev.tandem.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * k8s/overlays/vllm-pd, rendered by kubectl: every worker pod is a GPU pod with a vLLM server (KV
 * connector NixlConnector) and a Tandem worker of engine openai fronting it on localhost; the routers
 * stay the base's, and no CPU autoscaler is left on GPU pods.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class K8sVllmOverlayTest {
    private static final Path OVERLAY = Path.of("k8s", "overlays", "vllm-pd");
    private final List<HasMetadata> objects = new ArrayList<>();

    @BeforeAll
    void render() throws Exception {
        objects.addAll(K8sManifestsTest.renderOverlay(OVERLAY));
    }

    private List<Deployment> workers() {
        return objects.stream()
                .filter(Deployment.class::isInstance)
                .map(Deployment.class::cast)
                .filter(d -> d.getMetadata().getName().matches("tandem-(prefill|decode)"))
                .toList();
    }

    private static Container named(Deployment d, String name) {
        return d.getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> c.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError(d.getMetadata().getName() + " has no container " + name));
    }

    @Test
    void eachWorkerPodRunsVllmWithAKvConnectorAndATandemWorkerFrontingIt() {
        assertEquals(2, workers().size());
        for (Deployment d : workers()) {
            Container vllm = named(d, "vllm");
            List<String> args = vllm.getArgs();
            String kvConfig = args.get(args.indexOf("--kv-transfer-config") + 1);
            assertTrue(kvConfig.contains("\"kv_connector\":\"NixlConnector\""), kvConfig);
            assertTrue(args.contains("--port=8000"), args.toString());
            assertEquals(new Quantity("1"), vllm.getResources().getLimits().get("nvidia.com/gpu"));

            List<String> tandem = named(d, "tandem").getArgs();
            String joined = String.join(" ", tandem);
            assertTrue(
                    joined.contains("--engine openai --upstream http://127.0.0.1:8000 --upstream-protocol vllm"),
                    joined);
            assertEquals("1800000", K8sManifests.env(named(d, "tandem"), "TANDEM_MODEL_UPSTREAM_START_TIMEOUT_MS"));
            // KV events on: vLLM publishes where the worker subscribes.
            String events = args.get(args.indexOf("--kv-events-config") + 1);
            JsonObject config = new JsonObject(events);
            assertTrue(config.getBoolean("enable_kv_cache_events"), events);
            assertEquals("zmq", config.getString("publisher"), events);
            assertTrue(
                    joined.contains("--upstream-kv-events tcp://127.0.0.1:"
                            + config.getString("endpoint").replaceAll(".*:", "")),
                    joined);
            assertTrue(
                    joined.contains("--upstream-kv-events-replay tcp://127.0.0.1:"
                            + config.getString("replay_endpoint").replaceAll(".*:", "")),
                    joined);
        }
    }

    @Test
    void theRoutersAreTheBasesAndNoCpuAutoscalerScalesGpuPods() {
        assertTrue(objects.stream()
                .anyMatch(o ->
                        o instanceof Deployment && o.getMetadata().getName().equals("tandem-router")));
        assertTrue(
                objects.stream()
                        .filter(HorizontalPodAutoscaler.class::isInstance)
                        .map(o -> ((HorizontalPodAutoscaler) o)
                                .getSpec()
                                .getScaleTargetRef()
                                .getName())
                        .noneMatch(n -> n.matches("tandem-(prefill|decode)")),
                "no autoscaler on the GPU workers");
    }
}
