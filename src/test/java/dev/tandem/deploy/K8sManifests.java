package dev.tandem.deploy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.cfg.MapperConfig;
import tools.jackson.databind.introspect.Annotated;
import tools.jackson.databind.introspect.JacksonAnnotationIntrospector;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The Kubernetes manifests of a kustomization directory (k8s/), each YAML document read strictly into
 * the fabric8 model of the kind it claims, and the checks that tie them together: what
 * {@code kubectl apply -k} would not catch until a pod fails to start, or never. The checks live in
 * {@link K8sClusterChecks} (across objects) and {@link K8sWorkloadChecks} (each Deployment's pod).
 */
final class K8sManifests {

    /** apiVersion/kind → the typed model; any other kind is an error (no model, no check). */
    static final Map<String, Class<? extends HasMetadata>> KINDS = Map.ofEntries(
            Map.entry("v1/Namespace", Namespace.class),
            Map.entry("v1/ServiceAccount", ServiceAccount.class),
            Map.entry("v1/Service", Service.class),
            Map.entry("v1/ConfigMap", ConfigMap.class),
            Map.entry("apps/v1/Deployment", Deployment.class),
            Map.entry("policy/v1/PodDisruptionBudget", PodDisruptionBudget.class),
            Map.entry("autoscaling/v2/HorizontalPodAutoscaler", HorizontalPodAutoscaler.class),
            Map.entry("rbac.authorization.k8s.io/v1/Role", Role.class),
            Map.entry("rbac.authorization.k8s.io/v1/RoleBinding", RoleBinding.class),
            Map.entry("rbac.authorization.k8s.io/v1/ClusterRole", ClusterRole.class),
            Map.entry("rbac.authorization.k8s.io/v1/ClusterRoleBinding", ClusterRoleBinding.class));

    /** Tandem's roles: the value of the {@code tandem.dev/role} pod label and the command the pod runs. */
    static final List<String> ROLES = List.of("router", "prefill", "decode");

    static final String ROLE_LABEL = "tandem.dev/role";

    /**
     * Jackson (3, as fabric8 8 uses) that refuses unknown fields. fabric8's models keep unknown fields in
     * an any-setter ({@code additionalProperties}) instead of failing; the introspector hides it, so a
     * misspelled field is an {@code UnrecognizedPropertyException} naming it and its path.
     */
    static final ObjectMapper STRICT = JsonMapper.builder()
            .annotationIntrospector(new JacksonAnnotationIntrospector() {
                @Override
                public Boolean hasAnySetter(MapperConfig<?> config, Annotated a) {
                    return Boolean.FALSE;
                }
            })
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .build();

    /** One YAML document of one manifest file. */
    record Doc(String file, int index, HasMetadata object) {
        String kind() {
            return object.getKind();
        }

        String name() {
            return object.getMetadata() == null ? null : object.getMetadata().getName();
        }

        @Override
        public String toString() {
            return file + "#" + index + " " + kind() + "/" + name();
        }
    }

    final Path dir;
    final JsonNode kustomization;
    final List<Doc> docs;

    private K8sManifests(Path dir, JsonNode kustomization, List<Doc> docs) {
        this.dir = dir;
        this.kustomization = kustomization;
        this.docs = docs;
    }

    /** Reads dir/kustomization.yaml and every resource it lists; fails on the first unreadable document. */
    static K8sManifests load(Path dir) throws IOException {
        JsonNode kustomization =
                readDocuments(dir.resolve("kustomization.yaml")).get(0);
        List<Doc> docs = new ArrayList<>();
        for (String file : strings(kustomization.path("resources"))) {
            Path path = dir.resolve(file);
            if (!Files.isRegularFile(path)) {
                continue; // reported by problems()
            }
            List<JsonNode> trees = readDocuments(path);
            for (int i = 0; i < trees.size(); i++) {
                docs.add(new Doc(file, i, parse(file + "#" + i, trees.get(i))));
            }
        }
        return new K8sManifests(dir, kustomization, docs);
    }

    /** Every non-empty YAML document of a file, as trees. */
    static List<JsonNode> readDocuments(Path file) throws IOException {
        return readDocuments(Files.readString(file, StandardCharsets.UTF_8));
    }

    /** Every non-empty document of a YAML stream, as trees; a key given twice in one mapping is an error. */
    static List<JsonNode> readDocuments(String yaml) {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        List<JsonNode> out = new ArrayList<>();
        for (Object doc : new Yaml(new SafeConstructor(options)).loadAll(yaml)) {
            if (doc != null) {
                JsonNode node = STRICT.valueToTree(doc);
                if (!node.isEmpty()) {
                    out.add(node);
                }
            }
        }
        return out;
    }

    /** One document as the model of the kind it claims, refusing unknown fields at any depth. */
    static HasMetadata parse(String where, JsonNode tree) {
        String key =
                tree.path("apiVersion").asString("") + "/" + tree.path("kind").asString("");
        Class<? extends HasMetadata> type = KINDS.get(key);
        if (type == null) {
            throw new IllegalArgumentException(
                    where + ": no model for " + key + " (known: " + new TreeSet<>(KINDS.keySet()) + ")");
        }
        try {
            return STRICT.treeToValue(tree, type);
        } catch (JacksonException e) {
            throw new IllegalArgumentException(where + " (" + key + "): " + e.getMessage(), e);
        }
    }

    /**
     * What kustomize rendered from an overlay, for the checks that look at objects rather than at the
     * files of a kustomization: the namespace is the one the namespaced objects are in, and each rendered
     * ConfigMap (by its hash-suffixed name) stands for a configMapGenerator entry of the keys it holds.
     * Not for {@link K8sClusterChecks#checkKustomization}, which reads the files of a directory.
     */
    static K8sManifests rendered(Path overlay, List<HasMetadata> objects) {
        ObjectNode kustomization = STRICT.createObjectNode();
        objects.stream()
                .map(o -> o.getMetadata().getNamespace())
                .filter(Objects::nonNull)
                .findFirst()
                .ifPresent(ns -> kustomization.put("namespace", ns));
        var generators = kustomization.putArray("configMapGenerator");
        List<Doc> docs = new ArrayList<>();
        for (HasMetadata o : objects) {
            if (o instanceof ConfigMap cm) {
                var generator =
                        generators.addObject().put("name", cm.getMetadata().getName());
                var files = generator.putArray("files");
                (cm.getData() == null ? Map.<String, String>of() : cm.getData())
                        .keySet()
                        .forEach(files::add);
            }
            docs.add(new Doc("rendered", docs.size(), o));
        }
        return new K8sManifests(overlay, kustomization, docs);
    }

    // ------------------------------------------------------------------ lookups

    <T extends HasMetadata> List<T> all(Class<T> type) {
        return docs.stream()
                .map(Doc::object)
                .filter(type::isInstance)
                .map(type::cast)
                .toList();
    }

    <T extends HasMetadata> T named(Class<T> type, String name) {
        return all(type).stream()
                .filter(o -> Objects.equals(o.getMetadata().getName(), name))
                .findFirst()
                .orElse(null);
    }

    String namespace() {
        return kustomization.path("namespace").asString(null);
    }

    Deployment deploymentForRole(String role) {
        return all(Deployment.class).stream()
                .filter(d -> role.equals(podLabels(d).get(ROLE_LABEL)))
                .findFirst()
                .orElse(null);
    }

    static Map<String, String> podLabels(Deployment d) {
        Map<String, String> labels = d.getSpec().getTemplate().getMetadata().getLabels();
        return labels == null ? Map.of() : labels;
    }

    static Container container(Deployment d) {
        return d.getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    static String env(Container c, String name) {
        return c.getEnv() == null
                ? null
                : c.getEnv().stream()
                        .filter(e -> name.equals(e.getName()))
                        .map(EnvVar::getValue)
                        .findFirst()
                        .orElse(null);
    }

    static EnvVar envVar(Container c, String name) {
        return c.getEnv() == null
                ? null
                : c.getEnv().stream()
                        .filter(e -> name.equals(e.getName()))
                        .findFirst()
                        .orElse(null);
    }

    /** The container port a probe or Service targets: a number, or a port name of the container. */
    static Integer resolvePort(Container c, IntOrString port) {
        if (port == null) {
            return null;
        }
        if (port.getIntVal() != null) {
            return port.getIntVal();
        }
        return ports(c).stream()
                .filter(p -> port.getStrVal().equals(p.getName()))
                .map(ContainerPort::getContainerPort)
                .findFirst()
                .orElse(null);
    }

    static String text(IntOrString port) {
        return port == null ? "null" : port.getIntVal() != null ? String.valueOf(port.getIntVal()) : port.getStrVal();
    }

    static List<ContainerPort> ports(Container c) {
        return c.getPorts() == null ? List.of() : c.getPorts();
    }

    /** The generated ConfigMaps: name → the keys (file names) they hold. */
    Map<String, List<String>> generatedConfigMaps() {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (JsonNode gen : kustomization.path("configMapGenerator")) {
            List<String> keys = new ArrayList<>();
            for (String f : strings(gen.path("files"))) {
                int eq = f.indexOf('=');
                keys.add(eq >= 0 ? f.substring(0, eq) : Path.of(f).getFileName().toString());
            }
            out.put(gen.path("name").asString(""), keys);
        }
        return out;
    }

    static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asString("")));
        return out;
    }

    // ------------------------------------------------------------------ checks

    /**
     * Everything wrong with these manifests, as sentences; empty when they hang together.
     *
     * @param image          the image every container must run (the pom's {@code tandem.image}, what Jib builds)
     * @param hazelcastXml   the Kubernetes discovery settings the mounted Hazelcast XML uses
     * @param configKeys     {@code section.key} of every key of the mounted tandem.yaml (env overrides must name one)
     */
    List<String> problems(String image, DiscoverySettings hazelcastXml, Set<String> configKeys) {
        List<String> p = new ArrayList<>();
        // What is deployed first, then each pod, then what finds pods by label: the order findings read best in.
        K8sClusterChecks.checkKustomization(this, p);
        K8sClusterChecks.checkNamespaces(this, p);
        K8sClusterChecks.checkUniqueNames(this, p);
        K8sClusterChecks.checkImages(this, p, image);
        K8sClusterChecks.checkRbac(this, p);
        K8sWorkloadChecks.checkDeployments(this, p, configKeys);
        K8sClusterChecks.checkServices(this, p, hazelcastXml);
        K8sClusterChecks.checkDisruptionBudgets(this, p);
        K8sClusterChecks.checkAutoscalers(this, p);
        return p;
    }

    /** The Kubernetes discovery settings of a Hazelcast member XML. */
    record DiscoverySettings(String namespace, String labelName, String labelValue) {}

    /** section.key for every leaf key of a tandem.yaml (two levels: sections of keys). */
    static Set<String> configKeys(Path tandemYaml) throws IOException {
        JsonNode root = readDocuments(tandemYaml).get(0);
        Set<String> keys = new TreeSet<>();
        root.forEachEntry((section, value) -> {
            if (value instanceof ObjectNode o) {
                o.propertyNames().forEach(k -> keys.add(section + "." + k));
            }
        });
        return keys;
    }
}
