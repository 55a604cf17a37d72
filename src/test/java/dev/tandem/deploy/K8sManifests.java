package dev.tandem.deploy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.io.IOException;
import java.io.UncheckedIOException;
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
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
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
 * {@code kubectl apply -k} would not catch until a pod fails to start, or never.
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

  /** The fields a kustomization.yaml may have (kustomize v5's Kustomization type). */
  static final Set<String> KUSTOMIZATION_FIELDS = Set.of("apiVersion", "kind", "metadata", "namespace", "namePrefix",
      "nameSuffix", "labels", "commonLabels", "commonAnnotations", "resources", "components", "crds", "configurations",
      "generators", "transformers", "validators", "configMapGenerator", "secretGenerator", "generatorOptions",
      "images", "replicas", "patches", "patchesStrategicMerge", "patchesJson6902", "replacements", "vars",
      "openapi", "helmCharts", "helmGlobals", "buildMetadata", "sortOptions", "bases");

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
    JsonNode kustomization = readDocuments(dir.resolve("kustomization.yaml")).get(0);
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
    String key = tree.path("apiVersion").asString("") + "/" + tree.path("kind").asString("");
    Class<? extends HasMetadata> type = KINDS.get(key);
    if (type == null) {
      throw new IllegalArgumentException(where + ": no model for " + key + " (known: " + new TreeSet<>(KINDS.keySet()) + ")");
    }
    try {
      return STRICT.treeToValue(tree, type);
    } catch (JacksonException e) {
      throw new IllegalArgumentException(where + " (" + key + "): " + e.getMessage(), e);
    }
  }

  // ------------------------------------------------------------------ lookups

  <T extends HasMetadata> List<T> all(Class<T> type) {
    return docs.stream().map(Doc::object).filter(type::isInstance).map(type::cast).toList();
  }

  <T extends HasMetadata> T named(Class<T> type, String name) {
    return all(type).stream().filter(o -> Objects.equals(o.getMetadata().getName(), name)).findFirst().orElse(null);
  }

  String namespace() {
    return kustomization.path("namespace").asString(null);
  }

  Deployment deploymentForRole(String role) {
    return all(Deployment.class).stream()
        .filter(d -> role.equals(podLabels(d).get(ROLE_LABEL)))
        .findFirst().orElse(null);
  }

  static Map<String, String> podLabels(Deployment d) {
    Map<String, String> labels = d.getSpec().getTemplate().getMetadata().getLabels();
    return labels == null ? Map.of() : labels;
  }

  static Container container(Deployment d) {
    return d.getSpec().getTemplate().getSpec().getContainers().get(0);
  }

  static String env(Container c, String name) {
    return c.getEnv() == null ? null : c.getEnv().stream().filter(e -> name.equals(e.getName()))
        .map(EnvVar::getValue).findFirst().orElse(null);
  }

  static EnvVar envVar(Container c, String name) {
    return c.getEnv() == null ? null : c.getEnv().stream().filter(e -> name.equals(e.getName())).findFirst().orElse(null);
  }

  /** The container port a probe or Service targets: a number, or a port name of the container. */
  static Integer resolvePort(Container c, IntOrString port) {
    if (port == null) {
      return null;
    }
    if (port.getIntVal() != null) {
      return port.getIntVal();
    }
    return ports(c).stream().filter(p -> port.getStrVal().equals(p.getName()))
        .map(ContainerPort::getContainerPort).findFirst().orElse(null);
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
    checkKustomization(p);
    checkNamespaces(p);
    checkUniqueNames(p);
    checkImages(p, image);
    checkRbac(p);
    checkDeployments(p, configKeys);
    checkServices(p, hazelcastXml);
    checkDisruptionBudgets(p);
    checkAutoscalers(p);
    return p;
  }

  private void checkKustomization(List<String> p) {
    for (String field : kustomization.propertyNames()) {
      if (!KUSTOMIZATION_FIELDS.contains(field)) {
        p.add("kustomization.yaml: unknown field '" + field + "'");
      }
    }
    if (!"kustomize.config.k8s.io/v1beta1".equals(kustomization.path("apiVersion").asString(""))
        || !"Kustomization".equals(kustomization.path("kind").asString(""))) {
      p.add("kustomization.yaml: apiVersion/kind must be kustomize.config.k8s.io/v1beta1 Kustomization");
    }
    List<String> listed = strings(kustomization.path("resources"));
    for (String file : listed) {
      if (!Files.isRegularFile(dir.resolve(file))) {
        p.add("kustomization.yaml lists " + file + ", which does not exist");
      }
    }
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        String name = f.getFileName().toString();
        if ((name.endsWith(".yaml") || name.endsWith(".yml")) && !name.equals("kustomization.yaml")
            && !listed.contains(name)) {
          p.add(name + " is not listed in kustomization.yaml's resources, so kubectl apply -k skips it");
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (JsonNode gen : kustomization.path("configMapGenerator")) {
      for (String f : strings(gen.path("files"))) {
        String file = f.contains("=") ? f.substring(f.indexOf('=') + 1) : f;
        Path path = dir.resolve(file).normalize();
        if (!path.startsWith(dir.normalize())) {
          p.add("configMapGenerator file " + f + " is outside k8s/: kustomize refuses it without --load-restrictor");
        } else if (!Files.isRegularFile(path)) {
          p.add("configMapGenerator file " + f + " does not exist");
        }
      }
    }
    for (JsonNode img : kustomization.path("images")) {
      if (!img.hasNonNull("name")) {
        p.add("kustomization.yaml: an images entry has no name");
      }
    }
  }

  private void checkNamespaces(List<String> p) {
    String ns = namespace();
    if (ns == null) {
      p.add("kustomization.yaml sets no namespace");
      return;
    }
    if (named(Namespace.class, ns) == null) {
      p.add("no Namespace '" + ns + "' among the manifests, though kustomization.yaml deploys into it");
    }
    for (Doc d : docs) {
      String own = d.object().getMetadata().getNamespace();
      if (own != null && !own.equals(ns)) {
        p.add(d + " sets namespace '" + own + "', not '" + ns + "'");
      }
      if (d.name() == null || d.name().isBlank()) {
        p.add(d + " has no metadata.name");
      }
    }
  }

  private void checkUniqueNames(List<String> p) {
    Map<String, Long> counts = docs.stream().collect(Collectors.groupingBy(d -> d.kind() + "/" + d.name(), Collectors.counting()));
    counts.forEach((k, n) -> {
      if (n > 1) {
        p.add(k + " is defined " + n + " times");
      }
    });
  }

  private void checkImages(List<String> p, String image) {
    String kustomizeImage = null;
    for (JsonNode img : kustomization.path("images")) {
      kustomizeImage = img.path("newName").asString(img.path("name").asString("")) + ":" + img.path("newTag").asString("");
    }
    if (kustomizeImage != null && !kustomizeImage.equals(image)) {
      p.add("kustomization.yaml's images entry gives " + kustomizeImage + ", the build produces " + image);
    }
    for (Deployment d : all(Deployment.class)) {
      for (Container c : d.getSpec().getTemplate().getSpec().getContainers()) {
        if (!image.equals(c.getImage())) {
          p.add("Deployment " + d.getMetadata().getName() + " runs image " + c.getImage() + ", the build produces " + image);
        }
      }
    }
  }

  private void checkRbac(List<String> p) {
    String ns = namespace();
    for (RoleBinding b : all(RoleBinding.class)) {
      if (!"Role".equals(b.getRoleRef().getKind()) || named(Role.class, b.getRoleRef().getName()) == null) {
        p.add("RoleBinding " + b.getMetadata().getName() + " refers to a missing " + b.getRoleRef().getKind() + " "
            + b.getRoleRef().getName());
      }
      checkSubjects(p, "RoleBinding " + b.getMetadata().getName(), b.getSubjects(), ns);
    }
    for (ClusterRoleBinding b : all(ClusterRoleBinding.class)) {
      if (!"ClusterRole".equals(b.getRoleRef().getKind()) || named(ClusterRole.class, b.getRoleRef().getName()) == null) {
        p.add("ClusterRoleBinding " + b.getMetadata().getName() + " refers to a missing " + b.getRoleRef().getKind()
            + " " + b.getRoleRef().getName());
      }
      checkSubjects(p, "ClusterRoleBinding " + b.getMetadata().getName(), b.getSubjects(), ns);
    }
    // Hazelcast's API-mode discovery reads these (conf/cluster-k8s.xml).
    Set<String> granted = new TreeSet<>();
    for (Role r : all(Role.class)) {
      boolean bound = all(RoleBinding.class).stream().anyMatch(b -> b.getRoleRef().getName().equals(r.getMetadata().getName()));
      if (!bound) {
        continue;
      }
      r.getRules().forEach(rule -> rule.getResources().forEach(res -> {
        if (rule.getVerbs().containsAll(List.of("get", "list"))) {
          granted.add(res);
        }
      }));
    }
    for (String needed : List.of("endpoints", "endpointslices", "pods", "services")) {
      if (!granted.contains(needed)) {
        p.add("no bound Role grants get and list on " + needed + ", which Hazelcast's Kubernetes discovery reads");
      }
    }
  }

  private void checkSubjects(List<String> p, String what, List<Subject> subjects, String ns) {
    for (Subject s : subjects) {
      if ("ServiceAccount".equals(s.getKind())) {
        if (named(ServiceAccount.class, s.getName()) == null) {
          p.add(what + " binds ServiceAccount " + s.getName() + ", which is not defined");
        }
        if (!Objects.equals(ns, s.getNamespace())) {
          p.add(what + " binds ServiceAccount " + s.getName() + " in namespace " + s.getNamespace() + ", not " + ns);
        }
      }
    }
  }

  private void checkDeployments(List<String> p, Set<String> configKeys) {
    Map<String, List<String>> configMaps = generatedConfigMaps();
    for (String role : ROLES) {
      if (deploymentForRole(role) == null) {
        p.add("no Deployment has pods labelled " + ROLE_LABEL + "=" + role);
      }
    }
    for (Deployment d : all(Deployment.class)) {
      String name = "Deployment " + d.getMetadata().getName();
      Map<String, String> labels = podLabels(d);
      Map<String, String> selector = d.getSpec().getSelector().getMatchLabels();
      if (selector == null || selector.isEmpty() || !labels.entrySet().containsAll(selector.entrySet())) {
        p.add(name + ": selector " + selector + " does not match its pod labels " + labels);
      }
      String role = labels.get(ROLE_LABEL);
      if (!ROLES.contains(role)) {
        p.add(name + ": pod label " + ROLE_LABEL + " is " + role + ", not one of " + ROLES);
        continue;
      }
      PodSpec pod = d.getSpec().getTemplate().getSpec();
      if (pod.getServiceAccountName() == null || named(ServiceAccount.class, pod.getServiceAccountName()) == null) {
        p.add(name + ": serviceAccountName " + pod.getServiceAccountName() + " is not defined");
      }
      if (pod.getTerminationGracePeriodSeconds() == null || pod.getTerminationGracePeriodSeconds() < 30) {
        p.add(name + ": terminationGracePeriodSeconds should leave streams time to finish (>= 30 s)");
      }
      if (pod.getContainers().size() != 1) {
        p.add(name + ": expected one container");
        continue;
      }
      Container c = pod.getContainers().get(0);
      checkSecurity(p, name, pod, c);
      checkResources(p, name, c);
      checkArgs(p, name, role, c);
      checkEnv(p, name, c, configKeys);
      checkProbesAndMetrics(p, name, role, d, c);
      checkConfigVolume(p, name, pod, c, configMaps);
    }
  }

  private static void checkSecurity(List<String> p, String name, PodSpec pod, Container c) {
    var ps = pod.getSecurityContext();
    var cs = c.getSecurityContext();
    boolean nonRoot = ps != null && Boolean.TRUE.equals(ps.getRunAsNonRoot()) && ps.getRunAsUser() != null && ps.getRunAsUser() != 0;
    if (!nonRoot) {
      p.add(name + ": the pod must run as non-root (runAsNonRoot: true and a non-zero runAsUser)");
    }
    if (ps == null || ps.getSeccompProfile() == null || !"RuntimeDefault".equals(ps.getSeccompProfile().getType())) {
      p.add(name + ": seccompProfile RuntimeDefault is required by the restricted Pod Security Standard");
    }
    if (cs == null || !Boolean.FALSE.equals(cs.getAllowPrivilegeEscalation())
        || cs.getCapabilities() == null || cs.getCapabilities().getDrop() == null
        || !cs.getCapabilities().getDrop().contains("ALL")) {
      p.add(name + ": the container must set allowPrivilegeEscalation: false and drop ALL capabilities");
    }
    if (cs != null && Boolean.TRUE.equals(cs.getReadOnlyRootFilesystem())) {
      boolean tmp = c.getVolumeMounts() != null && c.getVolumeMounts().stream().anyMatch(m -> "/tmp".equals(m.getMountPath()));
      if (!tmp) {
        p.add(name + ": a read-only root filesystem needs a writable /tmp (the JVM and Vert.x write there)");
      }
    }
  }

  private static void checkResources(List<String> p, String name, Container c) {
    var r = c.getResources();
    Map<String, Quantity> req = r == null || r.getRequests() == null ? Map.of() : r.getRequests();
    Map<String, Quantity> lim = r == null || r.getLimits() == null ? Map.of() : r.getLimits();
    for (String k : List.of("cpu", "memory")) {
      if (!req.containsKey(k)) {
        p.add(name + ": no " + k + " request");
      }
      if (!lim.containsKey(k)) {
        p.add(name + ": no " + k + " limit");
      }
    }
    for (String k : List.of("cpu", "memory")) {
      if (req.containsKey(k) && lim.containsKey(k)
          && Quantity.getAmountInBytes(req.get(k)).compareTo(Quantity.getAmountInBytes(lim.get(k))) > 0) {
        p.add(name + ": " + k + " request above its limit");
      }
    }
  }

  private static void checkArgs(List<String> p, String name, String role, Container c) {
    List<String> args = c.getArgs() == null ? List.of() : c.getArgs();
    if (args.isEmpty() || !role.equals(args.get(0))) {
      p.add(name + ": args must start with the '" + role + "' command, not " + args);
    }
    int config = args.indexOf("--config");
    if (config < 0 || config + 1 >= args.size()) {
      p.add(name + ": args have no --config FILE");
    }
    if (!"router".equals(role)) {
      int id = args.indexOf("--worker-id");
      if (id < 0 || id + 1 >= args.size()) {
        p.add(name + ": a worker should get --worker-id (the pod name) so /admin/workers names pods");
      } else {
        String value = args.get(id + 1);
        if (value.startsWith("$(") && envVar(c, value.substring(2, value.length() - 1)) == null) {
          p.add(name + ": --worker-id " + value + " refers to an env var the container does not define");
        }
      }
    }
  }

  private static void checkEnv(List<String> p, String name, Container c, Set<String> configKeys) {
    EnvVar host = envVar(c, "TANDEM_CLUSTER_HOST");
    if (host == null || host.getValueFrom() == null || host.getValueFrom().getFieldRef() == null
        || !"status.podIP".equals(host.getValueFrom().getFieldRef().getFieldPath())) {
      p.add(name + ": TANDEM_CLUSTER_HOST must come from the downward API (status.podIP): Hazelcast and the event "
          + "bus must bind the address other pods reach");
    }
    if (c.getEnv() != null) {
      for (EnvVar e : c.getEnv()) {
        if (!e.getName().startsWith("TANDEM_")) {
          continue;
        }
        String key = configKey(e.getName());
        if (key == null || !configKeys.contains(key)) {
          p.add(name + ": env " + e.getName() + " overrides no key of the mounted tandem.yaml (" + key + ")");
        }
      }
    }
  }

  /** TANDEM_WORKER_HTTP_PORT → worker.http-port (sections are single words). */
  static String configKey(String env) {
    String rest = env.substring("TANDEM_".length()).toLowerCase(java.util.Locale.ROOT);
    int us = rest.indexOf('_');
    return us < 0 ? null : rest.substring(0, us) + "." + rest.substring(us + 1).replace('_', '-');
  }

  private static void checkProbesAndMetrics(List<String> p, String name, String role, Deployment d, Container c) {
    // Routers answer /health, /ready and /metrics on the API port, workers on worker.http-port.
    String portEnv = "router".equals(role) ? "TANDEM_HTTP_PORT" : "TANDEM_WORKER_HTTP_PORT";
    String portValue = env(c, portEnv);
    Integer httpPort = null;
    try {
      httpPort = portValue == null ? null : Integer.valueOf(portValue);
    } catch (NumberFormatException e) {
      p.add(name + ": " + portEnv + " is not a number: " + portValue);
    }
    if (httpPort == null || httpPort <= 0) {
      p.add(name + ": " + portEnv + " must be set: it is the port of /health, /ready and /metrics");
      return;
    }
    final int port = httpPort;
    if (ports(c).stream().noneMatch(cp -> cp.getContainerPort() == port)) {
      p.add(name + ": " + portEnv + "=" + port + " is not among the container's ports");
    }
    checkProbe(p, name, "livenessProbe", c.getLivenessProbe(), "/health", port, c);
    checkProbe(p, name, "readinessProbe", c.getReadinessProbe(), "/ready", port, c);
    if (c.getStartupProbe() != null) {
      checkProbe(p, name, "startupProbe", c.getStartupProbe(), "/health", port, c);
    }
    Map<String, String> ann = d.getSpec().getTemplate().getMetadata().getAnnotations();
    ann = ann == null ? Map.of() : ann;
    if (!"true".equals(ann.get("prometheus.io/scrape")) || !"/metrics".equals(ann.get("prometheus.io/path"))
        || !String.valueOf(port).equals(ann.get("prometheus.io/port"))) {
      p.add(name + ": pod annotations must say prometheus.io/scrape \"true\", path /metrics, port " + port
          + " (have " + ann + ")");
    }
    if (ports(c).stream().noneMatch(cp -> cp.getContainerPort() == 5701 && "hazelcast".equals(cp.getName()))) {
      p.add(name + ": no container port 'hazelcast' 5701 (the headless Service targets it)");
    }
  }

  private static void checkProbe(List<String> p, String name, String kind, Probe probe, String path, int port,
      Container c) {
    if (probe == null || probe.getHttpGet() == null) {
      p.add(name + ": " + kind + " must be an HTTP GET of " + path);
      return;
    }
    if (!path.equals(probe.getHttpGet().getPath())) {
      p.add(name + ": " + kind + " hits " + probe.getHttpGet().getPath() + ", not " + path);
    }
    Integer target = resolvePort(c, probe.getHttpGet().getPort());
    if (target == null || target != port) {
      p.add(name + ": " + kind + " port " + text(probe.getHttpGet().getPort()) + " resolves to " + target + ", not " + port);
    }
  }

  private void checkConfigVolume(List<String> p, String name, PodSpec pod, Container c, Map<String, List<String>> configMaps) {
    List<String> args = c.getArgs() == null ? List.of() : c.getArgs();
    int i = args.indexOf("--config");
    String configFile = i >= 0 && i + 1 < args.size() ? args.get(i + 1) : null;
    String xml = env(c, "TANDEM_CLUSTER_HAZELCAST_CONFIG");
    if (xml == null) {
      p.add(name + ": TANDEM_CLUSTER_HAZELCAST_CONFIG is not set: the node would use the loopback TCP-IP config");
    }
    Map<String, Volume> volumes = pod.getVolumes() == null ? Map.of()
        : pod.getVolumes().stream().collect(Collectors.toMap(Volume::getName, Function.identity()));
    List<VolumeMount> mounts = c.getVolumeMounts() == null ? List.of() : c.getVolumeMounts();
    for (VolumeMount m : mounts) {
      if (!volumes.containsKey(m.getName())) {
        p.add(name + ": mounts volume " + m.getName() + ", which the pod does not define");
      }
    }
    Set<String> reported = new java.util.HashSet<>();
    for (String file : Stream.of(configFile, xml).filter(Objects::nonNull).toList()) {
      Path f = Path.of(file);
      VolumeMount mount = mounts.stream().filter(m -> Path.of(m.getMountPath()).equals(f.getParent())).findFirst().orElse(null);
      Volume v = mount == null ? null : volumes.get(mount.getName());
      if (v == null || v.getConfigMap() == null) {
        p.add(name + ": " + file + " is not in a mounted ConfigMap");
        continue;
      }
      List<String> keys = configMaps.get(v.getConfigMap().getName());
      if (keys == null) {
        if (reported.add(v.getName())) {
          p.add(name + ": volume " + v.getName() + " mounts ConfigMap " + v.getConfigMap().getName()
              + ", which kustomization.yaml does not generate (generated: " + configMaps.keySet() + ")");
        }
      } else if (!keys.contains(f.getFileName().toString())) {
        p.add(name + ": ConfigMap " + v.getConfigMap().getName() + " has no key " + f.getFileName() + " (has " + keys + ")");
      }
    }
  }

  private void checkServices(List<String> p, DiscoverySettings discovery) {
    List<Deployment> deployments = all(Deployment.class);
    for (Service s : all(Service.class)) {
      String name = "Service " + s.getMetadata().getName();
      Map<String, String> selector = s.getSpec().getSelector();
      List<Deployment> selected = selector == null || selector.isEmpty() ? List.of() : deployments.stream()
          .filter(d -> podLabels(d).entrySet().containsAll(selector.entrySet())).toList();
      if (selected.isEmpty()) {
        p.add(name + ": selector " + selector + " matches no Deployment's pods");
      }
      for (ServicePort sp : s.getSpec().getPorts()) {
        for (Deployment d : selected) {
          IntOrString target = sp.getTargetPort() != null ? sp.getTargetPort() : new IntOrString(sp.getPort());
          if (resolvePort(container(d), target) == null
              || target.getIntVal() != null && ports(container(d)).stream().noneMatch(cp -> cp.getContainerPort().equals(target.getIntVal()))) {
            p.add(name + ": port " + sp.getName() + " targets " + text(target) + ", which Deployment "
                + d.getMetadata().getName() + " does not expose");
          }
        }
      }
    }
    // The HTTP Service: port 80 to the routers' API port, routers only.
    Service http = all(Service.class).stream().filter(s -> s.getSpec().getPorts().stream().anyMatch(sp -> sp.getPort() == 80))
        .findFirst().orElse(null);
    Deployment router = deploymentForRole("router");
    if (http == null) {
      p.add("no Service exposes port 80 for the HTTP API");
    } else if (router != null) {
      Map<String, String> sel = http.getSpec().getSelector() == null ? Map.of() : http.getSpec().getSelector();
      boolean onlyRouters = podLabels(router).entrySet().containsAll(sel.entrySet())
          && "router".equals(sel.get(ROLE_LABEL));
      if (!onlyRouters) {
        p.add("Service " + http.getMetadata().getName() + " must select router pods only (" + ROLE_LABEL + ": router), selects " + sel);
      }
      ServicePort sp = http.getSpec().getPorts().stream().filter(x -> x.getPort() == 80).findFirst().orElseThrow();
      Integer target = resolvePort(container(router), sp.getTargetPort());
      String api = env(container(router), "TANDEM_HTTP_PORT");
      if (target == null || !String.valueOf(target).equals(api)) {
        p.add("Service " + http.getMetadata().getName() + " port 80 goes to " + target + ", the routers listen on " + api);
      }
    }
    // The discovery Service: the one Hazelcast finds by label, in its namespace, selecting every node.
    List<Service> labelled = discovery.labelName() == null ? List.of() : all(Service.class).stream()
        .filter(s -> s.getMetadata().getLabels() != null
            && discovery.labelValue().equals(s.getMetadata().getLabels().get(discovery.labelName())))
        .toList();
    if (labelled.size() != 1) {
      p.add("cluster-k8s.xml discovers Services labelled " + discovery.labelName() + "=" + discovery.labelValue()
          + ": exactly one Service must carry that label, found " + labelled.stream().map(s -> s.getMetadata().getName()).toList());
    } else {
      Service hz = labelled.get(0);
      String name = "Service " + hz.getMetadata().getName();
      if (!Objects.equals(discovery.namespace(), namespace())) {
        p.add("cluster-k8s.xml looks in namespace " + discovery.namespace() + ", the Service is deployed in " + namespace());
      }
      if (!"None".equals(hz.getSpec().getClusterIP())) {
        p.add(name + " must be headless (clusterIP: None)");
      }
      if (!Boolean.TRUE.equals(hz.getSpec().getPublishNotReadyAddresses())) {
        p.add(name + " must publish not-ready addresses: routers are ready only after they have joined");
      }
      if (hz.getSpec().getPorts().size() != 1 || hz.getSpec().getPorts().get(0).getPort() != 5701) {
        p.add(name + " must have the one port 5701 (Hazelcast's member port)");
      }
      for (String role : ROLES) {
        Deployment d = deploymentForRole(role);
        Map<String, String> sel = hz.getSpec().getSelector() == null ? Map.of() : hz.getSpec().getSelector();
        if (d != null && !podLabels(d).entrySet().containsAll(sel.entrySet())) {
          p.add(name + " does not select the " + role + " pods: they would never join the cluster");
        }
      }
    }
  }

  private void checkDisruptionBudgets(List<String> p) {
    Deployment router = deploymentForRole("router");
    boolean routerCovered = false;
    for (PodDisruptionBudget b : all(PodDisruptionBudget.class)) {
      Map<String, String> sel = b.getSpec().getSelector() == null ? null : b.getSpec().getSelector().getMatchLabels();
      List<Deployment> matched = sel == null ? List.of() : all(Deployment.class).stream()
          .filter(d -> podLabels(d).entrySet().containsAll(sel.entrySet())).toList();
      if (matched.isEmpty()) {
        p.add("PodDisruptionBudget " + b.getMetadata().getName() + " selects no Deployment's pods");
      }
      if (router != null && matched.contains(router)) {
        routerCovered = true;
        IntOrString min = b.getSpec().getMinAvailable();
        if (min != null && min.getIntVal() != null && router.getSpec().getReplicas() != null
            && min.getIntVal() >= router.getSpec().getReplicas()) {
          p.add("PodDisruptionBudget " + b.getMetadata().getName() + ": minAvailable " + min.getIntVal()
              + " leaves no router to evict (replicas " + router.getSpec().getReplicas() + "): node drains would block");
        }
      }
    }
    if (!routerCovered) {
      p.add("no PodDisruptionBudget covers the routers");
    }
  }

  private void checkAutoscalers(List<String> p) {
    Set<String> scaled = new TreeSet<>();
    for (HorizontalPodAutoscaler h : all(HorizontalPodAutoscaler.class)) {
      var ref = h.getSpec().getScaleTargetRef();
      Deployment d = "Deployment".equals(ref.getKind()) && "apps/v1".equals(ref.getApiVersion())
          ? named(Deployment.class, ref.getName()) : null;
      if (d == null) {
        p.add("HorizontalPodAutoscaler " + h.getMetadata().getName() + " targets " + ref.getApiVersion() + " "
            + ref.getKind() + " " + ref.getName() + ", which is not defined");
        continue;
      }
      scaled.add(podLabels(d).get(ROLE_LABEL));
      Integer min = h.getSpec().getMinReplicas();
      if (min == null || min > h.getSpec().getMaxReplicas()) {
        p.add("HorizontalPodAutoscaler " + h.getMetadata().getName() + ": minReplicas must be set and <= maxReplicas");
      } else if (d.getSpec().getReplicas() != null && !d.getSpec().getReplicas().equals(min)) {
        p.add("Deployment " + d.getMetadata().getName() + " has replicas " + d.getSpec().getReplicas()
            + " but its autoscaler's minReplicas is " + min + ": keep them equal, or every apply fights the autoscaler");
      }
      boolean cpu = h.getSpec().getMetrics() != null && h.getSpec().getMetrics().stream().anyMatch(m ->
          "Resource".equals(m.getType()) && m.getResource() != null && "cpu".equals(m.getResource().getName()));
      if (cpu && (container(d).getResources() == null || container(d).getResources().getRequests() == null
          || !container(d).getResources().getRequests().containsKey("cpu"))) {
        p.add("HorizontalPodAutoscaler " + h.getMetadata().getName() + " scales on CPU utilisation, but the pods request no CPU");
      }
    }
    for (String role : ROLES) {
      if (!scaled.contains(role)) {
        p.add("no HorizontalPodAutoscaler scales the " + role + " Deployment");
      }
    }
  }

  /** The Kubernetes discovery settings of a Hazelcast member XML. */
  record DiscoverySettings(String namespace, String labelName, String labelValue) {
  }

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
