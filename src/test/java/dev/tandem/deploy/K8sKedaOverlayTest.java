package dev.tandem.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.deploy.KedaRender.Render;
import dev.tandem.deploy.KedaRender.ScaledObject;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * k8s/overlays/keda, rendered by kubectl: a KEDA ScaledObject for each worker Deployment of the base, scaling
 * it on {@code max(tandem_scaling_recommended_workers{role=...})} for that Deployment's role (the metric and
 * roles checked against what the routers' gauges really export), replicas = the recommendation (AverageValue
 * at 1), min <= max, a scale-down no faster than a pod per grace period, the base's CPU autoscalers gone and
 * its drain (grace period, shutdown drain, preStop) unchanged. The breakages change one thing each in a copy
 * of k8s/ and show that the checks catch it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class K8sKedaOverlayTest {
    private static final Path K8S = Path.of("k8s");
    private static final Path OVERLAY = Path.of("overlays", "keda");
    private Render base;
    private Render overlay;

    @BeforeAll
    void render() throws Exception {
        Assumptions.assumeTrue(K8sManifestsTest.onPath("kubectl"), "kubectl not installed");
        base = KedaRender.read(kustomize(K8S.resolve("base")));
        overlay = KedaRender.read(kustomize(K8S.resolve(OVERLAY)));
    }

    private static String kustomize(Path dir) throws IOException, InterruptedException {
        return new String(K8sManifestsTest.kustomize(dir), StandardCharsets.UTF_8);
    }

    @Test
    void theOverlayPassesEveryCheck() {
        assertEquals(List.of(), KedaRender.problems(base, overlay));
    }

    @Test
    void bothWorkerPoolsScaleOnTheirRolesRecommendation() {
        assertEquals(
                Map.of("tandem_scaling_recommended_workers", Set.of("decode", "prefill")), KedaRender.exportedRoles());
        assertEquals(2, overlay.scaledObjects().size());
        for (ScaledObject so : overlay.scaledObjects()) {
            String role = so.spec().scaleTargetRef().name().replace("tandem-", "");
            KedaRender.Trigger t = so.spec().triggers().get(0);
            assertEquals(
                    "max(tandem_scaling_recommended_workers{namespace=\"tandem\",role=\"" + role + "\"})",
                    t.metadata().get("query"));
            assertEquals("AverageValue", t.metricType());
            assertEquals("1", t.metadata().get("threshold"));
            assertTrue(so.spec().minReplicaCount() <= so.spec().maxReplicaCount());
            assertEquals("tandem", so.metadata().getNamespace());
        }
    }

    @Test
    void theBasesWorkersAndTheirDrainAreUnchanged() {
        for (Deployment d : base.all(Deployment.class)) {
            Deployment o = overlay.deployment(d.getMetadata().getName());
            assertEquals(
                    d.getSpec().getTemplate(),
                    o.getSpec().getTemplate(),
                    d.getMetadata().getName());
        }
        // The router keeps its CPU autoscaler; the workers' are KEDA's now.
        assertEquals(
                List.of("tandem-router"),
                overlay.all(io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler.class).stream()
                        .map(h -> h.getSpec().getScaleTargetRef().getName())
                        .toList());
    }

    static Stream<Arguments> breakages() {
        return Stream.of(
                Arguments.of("scaledobjects.yaml", "role=\"prefill\"", "role=\"decode\"", "query asks role decode"),
                Arguments.of(
                        "scaledobjects.yaml",
                        "max(tandem_scaling_recommended_workers{namespace=\"tandem\",role=\"decode\"})",
                        "max(tandem_scaling_recomended_workers{namespace=\"tandem\",role=\"decode\"})",
                        "query names tandem_scaling_recomended_workers"),
                Arguments.of(
                        "scaledobjects.yaml",
                        "max(tandem_scaling_recommended_workers{namespace=\"tandem\",role=\"prefill\"})",
                        "sum(tandem_scaling_recommended_workers{role=\"prefill\"})",
                        "is not max("),
                Arguments.of(
                        "scaledobjects.yaml",
                        "metricType: AverageValue",
                        "metricType: Value",
                        "not prometheus/AverageValue"),
                Arguments.of(
                        "scaledobjects.yaml",
                        "kind: Deployment\n    name: tandem-decode",
                        "kind: Deployment\n    name: tandem-decod",
                        "not a Deployment"),
                Arguments.of("scaledobjects.yaml", "minReplicaCount: 2", "minReplicaCount: 20", "replicas 20..16"),
                Arguments.of(
                        "scaledobjects.yaml", "periodSeconds: 150", "periodSeconds: 15", "faster than one per grace"),
                Arguments.of("scaledobjects.yaml", "threshold: \"1\"", "threshold: \"2\"", "threshold 2"),
                Arguments.of("scaledobjects.yaml", "minReplicaCount:", "minReplicaCont:", "minReplicaCont"),
                Arguments.of(
                        "kustomization.yaml", "  - target:\n", "  - target:\n      group: none\n", "two autoscalers"));
    }

    @ParameterizedTest(name = "{0}: {3}")
    @MethodSource("breakages")
    void eachBreakageIsCaught(String file, String from, String to, String expected, @TempDir Path tmp)
            throws Exception {
        Path copy = tmp.resolve("k8s");
        for (Path dir : List.of(Path.of("base"), OVERLAY)) {
            copyTree(K8S.resolve(dir), copy.resolve(dir));
        }
        Path target = copy.resolve(OVERLAY).resolve(file);
        String text = Files.readString(target);
        int at = text.indexOf(from);
        assertTrue(at >= 0, file + " no longer contains the text this case breaks: " + from);
        Files.writeString(target, text.substring(0, at) + to + text.substring(at + from.length()));
        List<String> problems;
        try {
            problems = KedaRender.problems(base, KedaRender.read(kustomize(copy.resolve(OVERLAY))));
        } catch (IllegalArgumentException | AssertionError e) {
            problems = List.of(String.valueOf(e.getMessage()));
        }
        List<String> found = problems;
        assertTrue(
                found.stream().anyMatch(p -> p.contains(expected)),
                () -> "breaking " + file + " (" + from.strip() + " -> " + to.strip() + ") should report '" + expected
                        + "'; got " + found);
    }

    @Test
    void aBrokenDrainInTheOverlayIsCaught() {
        // What checkDrainKept guards: an overlay that shortened a worker's grace period.
        Deployment decode = overlay.deployment("tandem-decode");
        Deployment shorter = new io.fabric8.kubernetes.api.model.apps.DeploymentBuilder(decode)
                .editSpec()
                .editTemplate()
                .editSpec()
                .withTerminationGracePeriodSeconds(30L)
                .endSpec()
                .endTemplate()
                .endSpec()
                .build();
        List<io.fabric8.kubernetes.api.model.HasMetadata> objects = new java.util.ArrayList<>(overlay.objects());
        objects.replaceAll(o -> o == decode ? shorter : o);
        List<String> problems = new java.util.ArrayList<>();
        KedaRender.checkDrainKept(base, new Render(objects, overlay.scaledObjects()), problems);
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).startsWith("tandem-decode: drain"), problems.get(0));
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path dest = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(dest);
                } else {
                    Files.copy(f, dest);
                }
            }
        }
    }
}
