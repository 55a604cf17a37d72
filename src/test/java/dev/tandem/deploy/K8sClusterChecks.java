package dev.tandem.deploy;

import static dev.tandem.deploy.K8sManifests.ROLES;
import static dev.tandem.deploy.K8sManifests.ROLE_LABEL;
import static dev.tandem.deploy.K8sManifests.container;
import static dev.tandem.deploy.K8sManifests.env;
import static dev.tandem.deploy.K8sManifests.podLabels;
import static dev.tandem.deploy.K8sManifests.ports;
import static dev.tandem.deploy.K8sManifests.resolvePort;
import static dev.tandem.deploy.K8sManifests.strings;
import static dev.tandem.deploy.K8sManifests.text;

import dev.tandem.deploy.K8sManifests.DiscoverySettings;
import dev.tandem.deploy.K8sManifests.Doc;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import tools.jackson.databind.JsonNode;

/**
 * The checks of {@link K8sManifests#problems} that span the whole kustomization: what {@code kubectl apply -k}
 * picks up (kustomization.yaml, namespace, names, image), and the objects that find each other only by
 * name or label (RBAC, Services, PodDisruptionBudgets, HorizontalPodAutoscalers), where a typo breaks
 * nothing at apply time and everything at run time. Each check adds its findings to {@code p}.
 */
final class K8sClusterChecks {

    /** The fields a kustomization.yaml may have (kustomize v5's Kustomization type). */
    static final Set<String> KUSTOMIZATION_FIELDS = Set.of(
            "apiVersion",
            "kind",
            "metadata",
            "namespace",
            "namePrefix",
            "nameSuffix",
            "labels",
            "commonLabels",
            "commonAnnotations",
            "resources",
            "components",
            "crds",
            "configurations",
            "generators",
            "transformers",
            "validators",
            "configMapGenerator",
            "secretGenerator",
            "generatorOptions",
            "images",
            "replicas",
            "patches",
            "patchesStrategicMerge",
            "patchesJson6902",
            "replacements",
            "vars",
            "openapi",
            "helmCharts",
            "helmGlobals",
            "buildMetadata",
            "sortOptions",
            "bases");

    private K8sClusterChecks() {}

    static void checkKustomization(K8sManifests k8s, List<String> p) {
        for (String field : k8s.kustomization.propertyNames()) {
            if (!KUSTOMIZATION_FIELDS.contains(field)) {
                p.add("kustomization.yaml: unknown field '" + field + "'");
            }
        }
        if (!"kustomize.config.k8s.io/v1beta1"
                        .equals(k8s.kustomization.path("apiVersion").asString(""))
                || !"Kustomization".equals(k8s.kustomization.path("kind").asString(""))) {
            p.add("kustomization.yaml: apiVersion/kind must be kustomize.config.k8s.io/v1beta1 Kustomization");
        }
        List<String> listed = strings(k8s.kustomization.path("resources"));
        for (String file : listed) {
            if (!Files.isRegularFile(k8s.dir.resolve(file))) {
                p.add("kustomization.yaml lists " + file + ", which does not exist");
            }
        }
        try (Stream<Path> files = Files.list(k8s.dir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                String name = f.getFileName().toString();
                if ((name.endsWith(".yaml") || name.endsWith(".yml"))
                        && !name.equals("kustomization.yaml")
                        && !listed.contains(name)) {
                    p.add(name + " is not listed in kustomization.yaml's resources, so kubectl apply -k skips it");
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (JsonNode gen : k8s.kustomization.path("configMapGenerator")) {
            for (String f : strings(gen.path("files"))) {
                String file = f.contains("=") ? f.substring(f.indexOf('=') + 1) : f;
                Path path = k8s.dir.resolve(file).normalize();
                if (!path.startsWith(k8s.dir.normalize())) {
                    p.add("configMapGenerator file " + f
                            + " is outside the kustomization: kustomize refuses it without --load-restrictor");
                } else if (!Files.isRegularFile(path)) {
                    p.add("configMapGenerator file " + f + " does not exist");
                }
            }
        }
        for (JsonNode img : k8s.kustomization.path("images")) {
            if (!img.hasNonNull("name")) {
                p.add("kustomization.yaml: an images entry has no name");
            }
        }
    }

    static void checkNamespaces(K8sManifests k8s, List<String> p) {
        String ns = k8s.namespace();
        if (ns == null) {
            p.add("kustomization.yaml sets no namespace");
            return;
        }
        if (k8s.named(Namespace.class, ns) == null) {
            p.add("no Namespace '" + ns + "' among the manifests, though kustomization.yaml deploys into it");
        }
        for (Doc d : k8s.docs) {
            String own = d.object().getMetadata().getNamespace();
            if (own != null && !own.equals(ns)) {
                p.add(d + " sets namespace '" + own + "', not '" + ns + "'");
            }
            if (d.name() == null || d.name().isBlank()) {
                p.add(d + " has no metadata.name");
            }
        }
    }

    static void checkUniqueNames(K8sManifests k8s, List<String> p) {
        Map<String, Long> counts =
                k8s.docs.stream().collect(Collectors.groupingBy(d -> d.kind() + "/" + d.name(), Collectors.counting()));
        counts.forEach((k, n) -> {
            if (n > 1) {
                p.add(k + " is defined " + n + " times");
            }
        });
    }

    static void checkImages(K8sManifests k8s, List<String> p, String image) {
        String kustomizeImage = null;
        for (JsonNode img : k8s.kustomization.path("images")) {
            kustomizeImage = img.path("newName").asString(img.path("name").asString("")) + ":"
                    + img.path("newTag").asString("");
        }
        if (kustomizeImage != null && !kustomizeImage.equals(image)) {
            p.add("kustomization.yaml's images entry gives " + kustomizeImage + ", the build produces " + image);
        }
        for (Deployment d : k8s.all(Deployment.class)) {
            for (Container c : d.getSpec().getTemplate().getSpec().getContainers()) {
                if (!image.equals(c.getImage())) {
                    p.add("Deployment " + d.getMetadata().getName() + " runs image " + c.getImage()
                            + ", the build produces " + image);
                }
            }
        }
    }

    static void checkRbac(K8sManifests k8s, List<String> p) {
        String ns = k8s.namespace();
        for (RoleBinding b : k8s.all(RoleBinding.class)) {
            if (!"Role".equals(b.getRoleRef().getKind())
                    || k8s.named(Role.class, b.getRoleRef().getName()) == null) {
                p.add("RoleBinding " + b.getMetadata().getName() + " refers to a missing "
                        + b.getRoleRef().getKind() + " " + b.getRoleRef().getName());
            }
            checkSubjects(k8s, p, "RoleBinding " + b.getMetadata().getName(), b.getSubjects(), ns);
        }
        for (ClusterRoleBinding b : k8s.all(ClusterRoleBinding.class)) {
            if (!"ClusterRole".equals(b.getRoleRef().getKind())
                    || k8s.named(ClusterRole.class, b.getRoleRef().getName()) == null) {
                p.add("ClusterRoleBinding " + b.getMetadata().getName() + " refers to a missing "
                        + b.getRoleRef().getKind() + " " + b.getRoleRef().getName());
            }
            checkSubjects(k8s, p, "ClusterRoleBinding " + b.getMetadata().getName(), b.getSubjects(), ns);
        }
        // Hazelcast's API-mode discovery reads these (conf/cluster-k8s.xml).
        Set<String> granted = new TreeSet<>();
        for (Role r : k8s.all(Role.class)) {
            boolean bound = k8s.all(RoleBinding.class).stream()
                    .anyMatch(
                            b -> b.getRoleRef().getName().equals(r.getMetadata().getName()));
            if (!bound) {
                continue;
            }
            r.getRules()
                    .forEach(rule -> rule.getResources().forEach(res -> {
                        if (rule.getVerbs().containsAll(List.of("get", "list"))) {
                            granted.add(res);
                        }
                    }));
        }
        for (String needed : List.of("endpoints", "endpointslices", "pods", "services")) {
            if (!granted.contains(needed)) {
                p.add("no bound Role grants get and list on " + needed
                        + ", which Hazelcast's Kubernetes discovery reads");
            }
        }
    }

    private static void checkSubjects(
            K8sManifests k8s, List<String> p, String what, List<Subject> subjects, String ns) {
        for (Subject s : subjects) {
            if ("ServiceAccount".equals(s.getKind())) {
                if (k8s.named(ServiceAccount.class, s.getName()) == null) {
                    p.add(what + " binds ServiceAccount " + s.getName() + ", which is not defined");
                }
                if (!Objects.equals(ns, s.getNamespace())) {
                    p.add(what + " binds ServiceAccount " + s.getName() + " in namespace " + s.getNamespace() + ", not "
                            + ns);
                }
            }
        }
    }

    static void checkServices(K8sManifests k8s, List<String> p, DiscoverySettings discovery) {
        List<Deployment> deployments = k8s.all(Deployment.class);
        for (Service s : k8s.all(Service.class)) {
            String name = "Service " + s.getMetadata().getName();
            Map<String, String> selector = s.getSpec().getSelector();
            List<Deployment> selected = selector == null || selector.isEmpty()
                    ? List.of()
                    : deployments.stream()
                            .filter(d -> podLabels(d).entrySet().containsAll(selector.entrySet()))
                            .toList();
            if (selected.isEmpty()) {
                p.add(name + ": selector " + selector + " matches no Deployment's pods");
            }
            for (ServicePort sp : s.getSpec().getPorts()) {
                for (Deployment d : selected) {
                    IntOrString target =
                            sp.getTargetPort() != null ? sp.getTargetPort() : new IntOrString(sp.getPort());
                    if (resolvePort(container(d), target) == null
                            || target.getIntVal() != null
                                    && ports(container(d)).stream()
                                            .noneMatch(
                                                    cp -> cp.getContainerPort().equals(target.getIntVal()))) {
                        p.add(name + ": port " + sp.getName() + " targets " + text(target) + ", which Deployment "
                                + d.getMetadata().getName() + " does not expose");
                    }
                }
            }
        }
        // The HTTP Service: port 80 to the routers' API port, routers only.
        Service http = k8s.all(Service.class).stream()
                .filter(s -> s.getSpec().getPorts().stream().anyMatch(sp -> sp.getPort() == 80))
                .findFirst()
                .orElse(null);
        Deployment router = k8s.deploymentForRole("router");
        if (http == null) {
            p.add("no Service exposes port 80 for the HTTP API");
        } else if (router != null) {
            Map<String, String> sel = http.getSpec().getSelector() == null
                    ? Map.of()
                    : http.getSpec().getSelector();
            boolean onlyRouters =
                    podLabels(router).entrySet().containsAll(sel.entrySet()) && "router".equals(sel.get(ROLE_LABEL));
            if (!onlyRouters) {
                p.add("Service " + http.getMetadata().getName() + " must select router pods only (" + ROLE_LABEL
                        + ": router), selects " + sel);
            }
            ServicePort sp = http.getSpec().getPorts().stream()
                    .filter(x -> x.getPort() == 80)
                    .findFirst()
                    .orElseThrow();
            Integer target = resolvePort(container(router), sp.getTargetPort());
            String api = env(container(router), "TANDEM_HTTP_PORT");
            if (target == null || !String.valueOf(target).equals(api)) {
                p.add("Service " + http.getMetadata().getName() + " port 80 goes to " + target
                        + ", the routers listen on " + api);
            }
        }
        // The discovery Service: the one Hazelcast finds by label, in its namespace, selecting every node.
        List<Service> labelled = discovery.labelName() == null
                ? List.of()
                : k8s.all(Service.class).stream()
                        .filter(s -> s.getMetadata().getLabels() != null
                                && discovery
                                        .labelValue()
                                        .equals(s.getMetadata().getLabels().get(discovery.labelName())))
                        .toList();
        if (labelled.size() != 1) {
            p.add("cluster-k8s.xml discovers Services labelled " + discovery.labelName() + "=" + discovery.labelValue()
                    + ": exactly one Service must carry that label, found "
                    + labelled.stream().map(s -> s.getMetadata().getName()).toList());
        } else {
            Service hz = labelled.get(0);
            String name = "Service " + hz.getMetadata().getName();
            if (!Objects.equals(discovery.namespace(), k8s.namespace())) {
                p.add("cluster-k8s.xml looks in namespace " + discovery.namespace() + ", the Service is deployed in "
                        + k8s.namespace());
            }
            if (!"None".equals(hz.getSpec().getClusterIP())) {
                p.add(name + " must be headless (clusterIP: None)");
            }
            if (!Boolean.TRUE.equals(hz.getSpec().getPublishNotReadyAddresses())) {
                p.add(name + " must publish not-ready addresses: routers are ready only after they have joined");
            }
            if (hz.getSpec().getPorts().size() != 1
                    || hz.getSpec().getPorts().get(0).getPort() != 5701) {
                p.add(name + " must have the one port 5701 (Hazelcast's member port)");
            }
            for (String role : ROLES) {
                Deployment d = k8s.deploymentForRole(role);
                Map<String, String> sel = hz.getSpec().getSelector() == null
                        ? Map.of()
                        : hz.getSpec().getSelector();
                if (d != null && !podLabels(d).entrySet().containsAll(sel.entrySet())) {
                    p.add(name + " does not select the " + role + " pods: they would never join the cluster");
                }
            }
        }
    }

    static void checkDisruptionBudgets(K8sManifests k8s, List<String> p) {
        Deployment router = k8s.deploymentForRole("router");
        boolean routerCovered = false;
        for (PodDisruptionBudget b : k8s.all(PodDisruptionBudget.class)) {
            Map<String, String> sel = b.getSpec().getSelector() == null
                    ? null
                    : b.getSpec().getSelector().getMatchLabels();
            List<Deployment> matched = sel == null
                    ? List.of()
                    : k8s.all(Deployment.class).stream()
                            .filter(d -> podLabels(d).entrySet().containsAll(sel.entrySet()))
                            .toList();
            if (matched.isEmpty()) {
                p.add("PodDisruptionBudget " + b.getMetadata().getName() + " selects no Deployment's pods");
            }
            if (router != null && matched.contains(router)) {
                routerCovered = true;
                IntOrString min = b.getSpec().getMinAvailable();
                if (min != null
                        && min.getIntVal() != null
                        && router.getSpec().getReplicas() != null
                        && min.getIntVal() >= router.getSpec().getReplicas()) {
                    p.add("PodDisruptionBudget " + b.getMetadata().getName() + ": minAvailable " + min.getIntVal()
                            + " leaves no router to evict (replicas "
                            + router.getSpec().getReplicas() + "): node drains would block");
                }
            }
        }
        if (!routerCovered) {
            p.add("no PodDisruptionBudget covers the routers");
        }
    }

    static void checkAutoscalers(K8sManifests k8s, List<String> p) {
        Set<String> scaled = new TreeSet<>();
        for (HorizontalPodAutoscaler h : k8s.all(HorizontalPodAutoscaler.class)) {
            var ref = h.getSpec().getScaleTargetRef();
            Deployment d = "Deployment".equals(ref.getKind()) && "apps/v1".equals(ref.getApiVersion())
                    ? k8s.named(Deployment.class, ref.getName())
                    : null;
            if (d == null) {
                p.add("HorizontalPodAutoscaler " + h.getMetadata().getName() + " targets " + ref.getApiVersion() + " "
                        + ref.getKind() + " " + ref.getName() + ", which is not defined");
                continue;
            }
            scaled.add(podLabels(d).get(ROLE_LABEL));
            Integer min = h.getSpec().getMinReplicas();
            if (min == null || min > h.getSpec().getMaxReplicas()) {
                p.add("HorizontalPodAutoscaler " + h.getMetadata().getName()
                        + ": minReplicas must be set and <= maxReplicas");
            } else if (d.getSpec().getReplicas() != null
                    && !d.getSpec().getReplicas().equals(min)) {
                p.add("Deployment " + d.getMetadata().getName() + " has replicas "
                        + d.getSpec().getReplicas() + " but its autoscaler's minReplicas is " + min
                        + ": keep them equal, or every apply fights the autoscaler");
            }
            boolean cpu = h.getSpec().getMetrics() != null
                    && h.getSpec().getMetrics().stream()
                            .anyMatch(m -> "Resource".equals(m.getType())
                                    && m.getResource() != null
                                    && "cpu".equals(m.getResource().getName()));
            if (cpu
                    && (container(d).getResources() == null
                            || container(d).getResources().getRequests() == null
                            || !container(d).getResources().getRequests().containsKey("cpu"))) {
                p.add("HorizontalPodAutoscaler " + h.getMetadata().getName()
                        + " scales on CPU utilisation, but the pods request no CPU");
            }
        }
        for (String role : ROLES) {
            if (!scaled.contains(role)) {
                p.add("no HorizontalPodAutoscaler scales the " + role + " Deployment");
            }
        }
    }
}
