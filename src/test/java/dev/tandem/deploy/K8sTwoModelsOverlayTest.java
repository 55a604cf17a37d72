package dev.tandem.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * k8s/overlays/two-models, rendered by kubectl: the base's routers and shared objects once, a second
 * model's prefill and decode Deployments started on its checkpoint, and each model's pods claimed by
 * its own Deployments and disruption budgets only (overlapping selectors would let one model's
 * Deployment count, or a budget protect, the other's pods).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class K8sTwoModelsOverlayTest {
    private static final Path OVERLAY = Path.of("k8s", "overlays", "two-models");
    private final List<HasMetadata> objects = new ArrayList<>();

    @BeforeAll
    void render() throws Exception {
        objects.addAll(K8sManifestsTest.renderOverlay(OVERLAY));
    }

    private <T extends HasMetadata> List<T> all(Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    private static boolean selects(Map<String, String> selector, Map<String, String> labels) {
        return labels.entrySet().containsAll(selector.entrySet());
    }

    private static Map<String, String> pods(Deployment d) {
        return K8sManifests.podLabels(d);
    }

    @Test
    void eachDeploymentClaimsOnlyItsOwnPods() {
        List<Deployment> deployments = all(Deployment.class);
        assertEquals(5, deployments.size(), "routers, two models × prefill and decode");
        for (Deployment owner : deployments) {
            Map<String, String> selector = owner.getSpec().getSelector().getMatchLabels();
            for (Deployment other : deployments) {
                assertEquals(
                        owner == other,
                        selects(selector, pods(other)),
                        owner.getMetadata().getName() + "'s selector " + selector + " against "
                                + other.getMetadata().getName() + "'s pods " + pods(other));
            }
        }
    }

    @Test
    void eachDisruptionBudgetAndAutoscalerCoversOneDeployment() {
        List<Deployment> deployments = all(Deployment.class);
        for (PodDisruptionBudget pdb : all(PodDisruptionBudget.class)) {
            long covered = deployments.stream()
                    .filter(d -> selects(pdb.getSpec().getSelector().getMatchLabels(), pods(d)))
                    .count();
            assertEquals(1, covered, pdb.getMetadata().getName());
        }
        for (HorizontalPodAutoscaler hpa : all(HorizontalPodAutoscaler.class)) {
            String target = hpa.getSpec().getScaleTargetRef().getName();
            assertTrue(
                    deployments.stream().anyMatch(d -> d.getMetadata().getName().equals(target)),
                    hpa.getMetadata().getName() + " scales " + target);
        }
    }

    @Test
    void theSecondModelsWorkersRunItsCheckpointAndTheFirstModelsDoNot() {
        for (Deployment d : all(Deployment.class)) {
            List<String> args = K8sManifests.container(d).getArgs();
            boolean stories = "stories".equals(pods(d).get("tandem.dev/model"));
            assertEquals(stories, args.contains("--model"), d.getMetadata().getName() + " " + args);
            if (stories) {
                String checkpoint = args.get(args.indexOf("--model") + 1);
                String tokenizer = args.get(args.indexOf("--tokenizer") + 1);
                assertTrue(
                        K8sManifests.container(d).getVolumeMounts().stream()
                                .anyMatch(m -> checkpoint.startsWith(m.getMountPath() + "/")
                                        && tokenizer.startsWith(m.getMountPath() + "/")),
                        d.getMetadata().getName() + " mounts its model files");
            }
        }
    }

    @Test
    void sharedObjectsComeOnceAndTheClusterServiceSeesEveryPod() {
        for (String kind : List.of("Namespace", "ServiceAccount", "Service", "Role", "ClusterRole")) {
            List<String> names = objects.stream()
                    .filter(o -> o.getKind().equals(kind))
                    .map(o -> o.getMetadata().getName())
                    .toList();
            assertEquals(names.stream().distinct().count(), names.size(), kind + ": " + names);
            assertFalse(names.stream().anyMatch(n -> n.endsWith("-stories")), kind + ": " + names);
        }
        Service hazelcast = all(Service.class).stream()
                .filter(s -> s.getMetadata().getName().equals("tandem-hazelcast"))
                .findFirst()
                .orElseThrow();
        for (Deployment d : all(Deployment.class)) {
            assertTrue(
                    selects(hazelcast.getSpec().getSelector(), pods(d)),
                    "the Hazelcast service finds " + d.getMetadata().getName());
        }
    }
}
