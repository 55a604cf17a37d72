package dev.tandem.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.hazelcast.config.Config;
import com.hazelcast.config.KubernetesConfig;
import com.hazelcast.config.XmlConfigBuilder;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;

/**
 * k8s/base is what {@code kubectl apply -k k8s/base} deploys. Every document is read strictly into the fabric8
 * model of its kind (a misspelled field fails, as the API server would reject or silently drop it), and
 * the manifests are checked against each other, against the Hazelcast XML they mount, against the
 * tandem.yaml keys their environment overrides, and against the image the pom's Jib config builds.
 * The negative cases break one thing each in a copy of k8s/base and show that the check catches it.
 */
class K8sManifestsTest {
    static final Path K8S = Path.of("k8s", "base");
    static final Path CONF = Path.of("conf");

    @Test
    void manifestsParseStrictlyAndHangTogether() throws IOException {
        K8sManifests m = K8sManifests.load(K8S);
        assertEquals(List.of(), check(K8S, m), "k8s/base problems");
        // The kinds the issue asks for are all there.
        Set<String> kinds =
                Set.copyOf(m.docs.stream().map(K8sManifests.Doc::kind).toList());
        assertTrue(
                kinds.containsAll(Set.of(
                        "Namespace",
                        "ServiceAccount",
                        "Role",
                        "RoleBinding",
                        "Service",
                        "Deployment",
                        "PodDisruptionBudget",
                        "HorizontalPodAutoscaler")),
                "kinds: " + kinds);
        assertEquals(3, m.deploymentForRole("router").getSpec().getReplicas());
    }

    @Test
    void mountedConfigFilesAreTheRepositorysOwn() throws IOException {
        // kustomize will not read files outside k8s/base (without --load-restrictor), so k8s/base/config holds copies.
        for (String f : List.of("tandem.yaml", "cluster-k8s.xml")) {
            assertEquals(
                    Files.readString(CONF.resolve(f)),
                    Files.readString(K8S.resolve("config").resolve(f)),
                    "k8s/base/config/" + f + " must equal conf/" + f + ": cp conf/" + f + " k8s/base/config/" + f);
        }
    }

    @Test
    void strictReadingRefusesMisspelledFieldsAtAnyDepth() throws IOException {
        String deployment = """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: x}
        spec:
          selector: {matchLabels: {a: b}}
          template:
            metadata: {labels: {a: b}}
            spec:
              containers:
                - name: c
                  image: i
                  readinessProbe:
                    httpGet: {path: /ready, port: 8080}
        """;
        assertNotNull(parse(deployment)); // the baseline reads
        IllegalArgumentException top = assertThrows(
                IllegalArgumentException.class, () -> parse(deployment.replace("  selector:", "  selectr:")));
        assertTrue(top.getMessage().contains("selectr"), top.getMessage());
        IllegalArgumentException deep = assertThrows(
                IllegalArgumentException.class, () -> parse(deployment.replace("readinessProbe", "readinesProbe")));
        assertTrue(deep.getMessage().contains("readinesProbe"), deep.getMessage());
        IllegalArgumentException deeper = assertThrows(
                IllegalArgumentException.class, () -> parse(deployment.replace("path: /ready", "paht: /ready")));
        assertTrue(deeper.getMessage().contains("paht"), deeper.getMessage());
        IllegalArgumentException wrongType = assertThrows(
                IllegalArgumentException.class,
                () -> parse(deployment.replace("spec:\n  selector:", "spec:\n  replicas: three\n  selector:")));
        assertTrue(
                wrongType.getMessage().contains("replicas")
                        || wrongType.getMessage().contains("three"),
                wrongType.getMessage());
        IllegalArgumentException unknownKind = assertThrows(
                IllegalArgumentException.class, () -> parse(deployment.replace("apps/v1", "apps/v1beta2")));
        assertTrue(unknownKind.getMessage().contains("no model"), unknownKind.getMessage());
    }

    private static HasMetadata parse(String yaml) throws IOException {
        return K8sManifests.parse("inline", K8sManifests.readDocuments(yaml).get(0));
    }

    /** One breakage each: file, the exact text replaced, its replacement, a fragment of the expected problem. */
    static Stream<Arguments> breakages() {
        return Stream.of(
                Arguments.of("router.yaml", "          readinessProbe:", "          readinesProbe:", "readinesProbe"),
                Arguments.of("decode.yaml", "              path: /ready", "              paht: /ready", "paht"),
                Arguments.of("router.yaml", "kind: PodDisruptionBudget", "kind: PodDisruptionBudgit", "no model"),
                Arguments.of("kustomization.yaml", "  - decode.yaml\n", "", "decode.yaml is not listed"),
                Arguments.of(
                        "kustomization.yaml",
                        "  - decode.yaml\n",
                        "  - decode.yaml\n  - missing.yaml\n",
                        "missing.yaml, which does not exist"),
                Arguments.of("kustomization.yaml", "resources:", "resource:", "unknown field 'resource'"),
                Arguments.of(
                        "kustomization.yaml",
                        "      - config/tandem.yaml\n",
                        "      - ../conf/tandem.yaml\n",
                        "outside the kustomization"),
                Arguments.of(
                        "prefill.yaml",
                        "serviceAccountName: tandem",
                        "serviceAccountName: tandem-sa",
                        "serviceAccountName tandem-sa is not defined"),
                Arguments.of(
                        "rbac.yaml",
                        "    resources: [endpoints, pods, services]",
                        "    resources: [endpoints, services]",
                        "get and list on pods"),
                Arguments.of(
                        "router.yaml",
                        "  type: ClusterIP\n  selector:\n    app.kubernetes.io/name: tandem\n    tandem.dev/role: router",
                        "  type: ClusterIP\n  selector:\n    app.kubernetes.io/name: tandem\n    tandem.dev/role: routers",
                        "matches no Deployment"),
                Arguments.of("router.yaml", "      targetPort: http", "      targetPort: web", "does not expose"),
                Arguments.of(
                        "router.yaml",
                        "              path: /ready",
                        "              path: /health",
                        "readinessProbe hits /health"),
                Arguments.of("decode.yaml", "              value: \"9090\"", "              value: \"9091\"", "9091"),
                Arguments.of(
                        "prefill.yaml",
                        "        prometheus.io/port: \"9090\"",
                        "        prometheus.io/port: \"8080\"",
                        "prometheus.io/scrape"),
                Arguments.of(
                        "router.yaml",
                        "    kind: Deployment\n    name: tandem-router",
                        "    kind: Deployment\n    name: tandem-routr",
                        "which is not defined"),
                Arguments.of(
                        "decode.yaml",
                        "            name: tandem-config",
                        "            name: tandem-conf",
                        "does not generate"),
                Arguments.of(
                        "router.yaml",
                        "args: [router, --config, /etc/tandem/tandem.yaml]",
                        "args: [router, --config, /etc/tandem/tandem.yml]",
                        "no key tandem.yml"),
                Arguments.of("prefill.yaml", "        runAsNonRoot: true", "        runAsNonRoot: false", "non-root"),
                Arguments.of(
                        "router.yaml",
                        "TANDEM_ROUTER_MAX_IN_FLIGHT",
                        "TANDEM_ROUTER_MAX_INFLIGHT",
                        "router.max-inflight"),
                Arguments.of(
                        "decode.yaml",
                        "                  fieldPath: status.podIP",
                        "                  fieldPath: status.hostIP",
                        "TANDEM_CLUSTER_HOST"),
                Arguments.of(
                        "hazelcast-service.yaml",
                        "    tandem.dev/discovery: hazelcast",
                        "    tandem.dev/discovery: hz",
                        "exactly one Service must carry that label"),
                Arguments.of(
                        "router.yaml",
                        "    app.kubernetes.io/component: router\nspec:\n  type: ClusterIP",
                        "    app.kubernetes.io/component: router\n    tandem.dev/discovery: hazelcast\nspec:\n  type: ClusterIP",
                        "exactly one Service must carry that label"),
                Arguments.of(
                        "hazelcast-service.yaml",
                        "  publishNotReadyAddresses: true",
                        "  publishNotReadyAddresses: false",
                        "not-ready"),
                Arguments.of(
                        "hazelcast-service.yaml",
                        "    app.kubernetes.io/name: tandem\n  ports:",
                        "    app.kubernetes.io/name: tandem\n    tandem.dev/role: router\n  ports:",
                        "does not select the prefill pods"),
                Arguments.of(
                        "kustomization.yaml", "namespace: tandem", "namespace: inference", "no Namespace 'inference'"),
                Arguments.of(
                        "kustomization.yaml",
                        "    newTag: 0.1.0",
                        "    newTag: latest",
                        "the build produces tandem:0.1.0"),
                Arguments.of("router.yaml", "  minAvailable: 2", "  minAvailable: 3", "node drains would block"),
                Arguments.of("decode.yaml", "  minReplicas: 2", "  minReplicas: 1", "keep them equal"),
                Arguments.of(
                        "config/cluster-k8s.xml",
                        "<namespace>tandem</namespace>",
                        "<namespace>default</namespace>",
                        "looks in namespace default"));
    }

    @ParameterizedTest(name = "{0}: {3}")
    @MethodSource("breakages")
    void eachBreakageIsCaught(String file, String from, String to, String expected, @TempDir Path tmp)
            throws IOException {
        Path copy = tmp.resolve("k8s");
        copyTree(K8S, copy);
        Path target = copy.resolve(file);
        String text = Files.readString(target);
        assertTrue(text.contains(from), file + " no longer contains the text this case breaks: " + from);
        Files.writeString(target, text.replace(from, to));
        List<String> problems;
        try {
            problems = check(copy, K8sManifests.load(copy));
        } catch (IllegalArgumentException e) {
            problems = List.of(e.getMessage());
        }
        final List<String> found = problems;
        assertTrue(
                found.stream().anyMatch(p -> p.contains(expected)),
                () -> "breaking " + file + " (" + from.strip() + " -> " + to.strip() + ") should report '" + expected
                        + "'; got " + found);
    }

    /**
     * What kubectl would apply: rendered by the kustomize built into kubectl, when kubectl is installed.
     * Checks the generated ConfigMap (hashed name) is what every Deployment mounts and everything namespaced
     * lands in the namespace.
     */
    @Test
    void kubectlKustomizeRendersIt() throws Exception {
        Assumptions.assumeTrue(onPath("kubectl"), "kubectl not installed");
        byte[] out = kustomize(K8S);
        Path rendered = Files.createTempFile("tandem-k8s", ".yaml");
        try {
            Files.write(rendered, out);
            List<HasMetadata> objects = new ArrayList<>();
            for (JsonNode doc : K8sManifests.readDocuments(rendered)) {
                objects.add(K8sManifests.parse("rendered", doc));
            }
            K8sManifests source = K8sManifests.load(K8S);
            assertEquals(source.docs.size() + 1, objects.size(), "the manifests plus one generated ConfigMap");
            ConfigMap cm = objects.stream()
                    .filter(ConfigMap.class::isInstance)
                    .map(ConfigMap.class::cast)
                    .findFirst()
                    .orElseThrow();
            assertTrue(
                    cm.getMetadata().getName().startsWith("tandem-config-"),
                    "hash-suffixed: " + cm.getMetadata().getName());
            assertEquals(
                    Files.readString(CONF.resolve("cluster-k8s.xml")),
                    cm.getData().get("cluster-k8s.xml"));
            assertEquals(
                    Files.readString(CONF.resolve("tandem.yaml")), cm.getData().get("tandem.yaml"));
            for (HasMetadata o : objects) {
                if (!Set.of("Namespace", "ClusterRole", "ClusterRoleBinding").contains(o.getKind())) {
                    assertEquals(
                            "tandem",
                            o.getMetadata().getNamespace(),
                            o.getKind() + "/" + o.getMetadata().getName());
                }
                if (o instanceof Deployment d) {
                    assertTrue(
                            d.getSpec().getTemplate().getSpec().getVolumes().stream()
                                    .anyMatch(v -> v.getConfigMap() != null
                                            && cm.getMetadata()
                                                    .getName()
                                                    .equals(v.getConfigMap().getName())),
                            d.getMetadata().getName() + " mounts the generated ConfigMap");
                }
            }
        } finally {
            Files.deleteIfExists(rendered);
        }
    }

    // ------------------------------------------------------------------ helpers

    static List<String> check(Path k8sDir, K8sManifests m) throws IOException {
        return m.problems(
                imageFromPom(),
                discovery(k8sDir.resolve("config/cluster-k8s.xml")),
                K8sManifests.configKeys(k8sDir.resolve("config/tandem.yaml")));
    }

    /** The image the pom's Jib configuration builds (property tandem.image). */
    static String imageFromPom() throws IOException {
        Matcher m = Pattern.compile("<tandem\\.image>([^<]+)</tandem\\.image>")
                .matcher(Files.readString(Path.of("pom.xml")));
        if (!m.find()) {
            fail("pom.xml has no <tandem.image> property");
        }
        return m.group(1).trim();
    }

    /** The Kubernetes discovery settings of a Hazelcast member XML, read (and schema-checked) by Hazelcast. */
    static K8sManifests.DiscoverySettings discovery(Path xml) throws IOException {
        Config config = new XmlConfigBuilder(xml.toString()).build();
        KubernetesConfig k = config.getNetworkConfig().getJoin().getKubernetesConfig();
        if (!k.isEnabled()) {
            return new K8sManifests.DiscoverySettings(null, null, null);
        }
        Map<String, String> props = k.getProperties();
        return new K8sManifests.DiscoverySettings(
                props.get("namespace"), props.get("service-label-name"), props.get("service-label-value"));
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

    /** What {@code kubectl kustomize dir} renders; a failure or a hang is an assertion error. */
    static byte[] kustomize(Path dir) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("kubectl", "kustomize", dir.toString()).start();
        byte[] out;
        byte[] err;
        try (InputStream o = p.getInputStream();
                InputStream e = p.getErrorStream()) {
            out = o.readAllBytes();
            err = e.readAllBytes();
        }
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "kubectl kustomize hung");
        assertEquals(0, p.exitValue(), () -> "kubectl kustomize failed: " + new String(err, StandardCharsets.UTF_8));
        return out;
    }

    /** The objects {@code kubectl kustomize overlay} renders; the calling test is skipped without kubectl. */
    static List<HasMetadata> renderOverlay(Path overlay) throws IOException, InterruptedException {
        Assumptions.assumeTrue(onPath("kubectl"), "kubectl not installed");
        byte[] out = kustomize(overlay);
        List<HasMetadata> objects = new ArrayList<>();
        for (JsonNode doc : K8sManifests.readDocuments(new String(out, StandardCharsets.UTF_8))) {
            objects.add(K8sManifests.parse("rendered", doc));
        }
        return objects;
    }

    static boolean onPath(String command) {
        String path = System.getenv("PATH");
        return path != null
                && Stream.of(path.split(java.io.File.pathSeparator))
                        .anyMatch(dir -> Files.isExecutable(Path.of(dir, command)));
    }
}
