package dev.tandem.deploy;

import dev.tandem.metrics.ScalingGauges;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Lifecycle;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HPAScalingPolicy;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HPAScalingRules;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerBehavior;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * The KEDA overlay rendered by kubectl: built-in kinds as fabric8 models, KEDA's ScaledObjects read strictly
 * into the records below (a misspelled field fails, as for the built-in kinds), and the checks that tie the
 * ScaledObjects to the Deployments they scale and to the metric the routers export.
 */
final class KedaRender {
    static final String KEDA = "keda.sh/v1alpha1";

    record Target(String apiVersion, String kind, String name) {}

    record Fallback(int failureThreshold, int replicas) {}

    record HpaConfig(String name, HorizontalPodAutoscalerBehavior behavior) {}

    record Advanced(HpaConfig horizontalPodAutoscalerConfig, Boolean restoreToOriginalReplicaCount) {}

    record Trigger(String type, String name, String metricType, Map<String, String> metadata) {}

    record Spec(
            Target scaleTargetRef,
            Integer pollingInterval,
            Integer cooldownPeriod,
            Integer minReplicaCount,
            Integer maxReplicaCount,
            Fallback fallback,
            Advanced advanced,
            List<Trigger> triggers) {}

    record ScaledObject(String apiVersion, String kind, ObjectMeta metadata, Spec spec) {
        String name() {
            return metadata.getName();
        }
    }

    /** One render: the built-in kinds and the ScaledObjects. */
    record Render(List<HasMetadata> objects, List<ScaledObject> scaledObjects) {
        <T extends HasMetadata> List<T> all(Class<T> type) {
            return objects.stream().filter(type::isInstance).map(type::cast).toList();
        }

        Deployment deployment(String name) {
            return all(Deployment.class).stream()
                    .filter(d -> d.getMetadata().getName().equals(name))
                    .findFirst()
                    .orElse(null);
        }
    }

    private KedaRender() {}

    static Render read(String yaml) {
        List<HasMetadata> objects = new ArrayList<>();
        List<ScaledObject> scaled = new ArrayList<>();
        int i = 0;
        for (JsonNode doc : K8sManifests.readDocuments(yaml)) {
            String where = "rendered#" + i++;
            String apiVersion = doc.path("apiVersion").asString("");
            if (!apiVersion.startsWith("keda.sh/")) {
                objects.add(K8sManifests.parse(where, doc));
                continue;
            }
            String kind = doc.path("kind").asString("");
            if (!KEDA.equals(apiVersion) || !kind.equals("ScaledObject")) {
                throw new IllegalArgumentException(where + ": no model for " + apiVersion + "/" + kind);
            }
            try {
                scaled.add(K8sManifests.STRICT.treeToValue(doc, ScaledObject.class));
            } catch (JacksonException e) {
                throw new IllegalArgumentException(where + " (" + KEDA + "/ScaledObject): " + e.getMessage(), e);
            }
        }
        return new Render(objects, scaled);
    }

    /**
     * The metric names and roles a router exports its recommendations under, from the gauges themselves
     * scraped as Prometheus text: the queries must name what is really there.
     */
    static Map<String, Set<String>> exportedRoles() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new ScalingGauges(registry).update(Map.of("m", new ScalingGauges.Values(1, 1, 1)));
        Map<String, Set<String>> out = new java.util.TreeMap<>();
        Matcher m = Pattern.compile("(?m)^(tandem_scaling_recommended_workers)\\{[^}]*role=\"(\\w+)\"")
                .matcher(registry.scrape());
        while (m.find()) {
            out.computeIfAbsent(m.group(1), k -> new TreeSet<>()).add(m.group(2));
        }
        return out;
    }

    private static final Pattern QUERY = Pattern.compile("^max\\((\\w+)\\{([^}]*)}\\)$");
    private static final Pattern ROLE = Pattern.compile("(?:^|,)\\s*role\\s*=\\s*\"(\\w+)\"");

    /** Each ScaledObject scales a Deployment of the render on the recommendation for that Deployment's role. */
    static void checkTargets(Render r, List<String> problems) {
        Map<String, Set<String>> exported = exportedRoles();
        Set<String> scaled = new TreeSet<>();
        for (ScaledObject so : r.scaledObjects()) {
            Target t = so.spec().scaleTargetRef();
            Deployment d = t == null ? null : r.deployment(t.name());
            if (d == null || !"Deployment".equals(t.kind()) || !"apps/v1".equals(t.apiVersion())) {
                problems.add(so.name() + ": scales " + t + ", not a Deployment of the render");
                continue;
            }
            if (!Objects.equals(so.metadata().getNamespace(), d.getMetadata().getNamespace())) {
                problems.add(so.name() + ": in namespace " + so.metadata().getNamespace() + ", its Deployment in "
                        + d.getMetadata().getNamespace());
            }
            scaled.add(t.name());
            String role = K8sManifests.podLabels(d).get(K8sManifests.ROLE_LABEL);
            checkTrigger(so, role, exported, problems);
        }
        if (!scaled.equals(Set.of("tandem-prefill", "tandem-decode"))) {
            problems.add("the ScaledObjects scale " + scaled + ", not tandem-prefill and tandem-decode");
        }
        for (HorizontalPodAutoscaler h : r.all(HorizontalPodAutoscaler.class)) {
            if (scaled.contains(h.getSpec().getScaleTargetRef().getName())) {
                problems.add("HorizontalPodAutoscaler " + h.getMetadata().getName() + " also scales "
                        + h.getSpec().getScaleTargetRef().getName() + ": two autoscalers fight over it");
            }
        }
    }

    private static void checkTrigger(
            ScaledObject so, String role, Map<String, Set<String>> exported, List<String> problems) {
        List<Trigger> triggers = so.spec().triggers();
        if (triggers == null || triggers.size() != 1) {
            problems.add(so.name() + ": wants one trigger, has " + triggers);
            return;
        }
        Trigger t = triggers.get(0);
        // AverageValue at 1: replicas = the recommendation (Value would multiply the current replicas by it).
        if (!"prometheus".equals(t.type()) || !"AverageValue".equals(t.metricType())) {
            problems.add(so.name() + ": trigger " + t.type() + "/" + t.metricType() + ", not prometheus/AverageValue");
        }
        Map<String, String> meta = t.metadata() == null ? Map.of() : t.metadata();
        if (!"1".equals(meta.get("threshold"))) {
            problems.add(so.name() + ": threshold " + meta.get("threshold") + ", not 1 (a pod per recommended worker)");
        }
        String query = String.valueOf(meta.get("query")).strip();
        Matcher q = QUERY.matcher(query);
        if (!q.matches()) {
            problems.add(so.name() + ": query " + query + " is not max(<metric>{<labels>})");
            return;
        }
        if (!exported.containsKey(q.group(1))) {
            problems.add(so.name() + ": query names " + q.group(1) + "; the routers export " + exported.keySet());
        }
        Matcher roleLabel = ROLE.matcher(q.group(2));
        String asked = roleLabel.find() ? roleLabel.group(1) : null;
        if (!Objects.equals(asked, role)
                || !exported.getOrDefault(q.group(1), Set.of()).contains(asked)) {
            problems.add(so.name() + ": query asks role " + asked + " for a Deployment of role " + role + " (exported: "
                    + exported + ")");
        }
    }

    /** Bounds, and a scale-down that removes a pod no faster than its Deployment drains one. */
    static void checkPace(Render r, List<String> problems) {
        for (ScaledObject so : r.scaledObjects()) {
            Spec s = so.spec();
            if (s.minReplicaCount() == null
                    || s.maxReplicaCount() == null
                    || s.minReplicaCount() < 1
                    || s.minReplicaCount() > s.maxReplicaCount()) {
                problems.add(so.name() + ": replicas " + s.minReplicaCount() + ".." + s.maxReplicaCount()
                        + " (want 1 <= min <= max: a served model keeps a worker of each role)");
            }
            Deployment d = r.deployment(s.scaleTargetRef().name());
            HPAScalingRules down = s.advanced() == null || s.advanced().horizontalPodAutoscalerConfig() == null
                    ? null
                    : s.advanced().horizontalPodAutoscalerConfig().behavior().getScaleDown();
            if (d == null
                    || down == null
                    || down.getPolicies() == null
                    || down.getPolicies().isEmpty()) {
                problems.add(so.name() + ": no scale-down policy: the HPA default removes pods at any pace");
                continue;
            }
            long grace = d.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
            for (HPAScalingPolicy p : down.getPolicies()) {
                if (!"Pods".equals(p.getType()) || p.getValue() != 1 || p.getPeriodSeconds() < grace) {
                    problems.add(so.name() + ": scale-down policy " + p.getType() + " " + p.getValue() + " per "
                            + p.getPeriodSeconds() + " s removes pods faster than one per grace period (" + grace
                            + " s)");
                }
            }
        }
    }

    /** The drain the base gives each role's pods is the overlay's too: grace period, drain time, preStop. */
    static void checkDrainKept(Render base, Render overlay, List<String> problems) {
        for (Deployment b : base.all(Deployment.class)) {
            Deployment o = overlay.deployment(b.getMetadata().getName());
            if (o == null) {
                problems.add(b.getMetadata().getName() + " is missing from the overlay");
                continue;
            }
            Container bc = K8sManifests.container(b);
            Container oc = K8sManifests.container(o);
            List<Object> was = List.of(
                    String.valueOf(b.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds()),
                    String.valueOf(K8sManifests.env(bc, "TANDEM_CLUSTER_SHUTDOWN_DRAIN_MS")),
                    String.valueOf(preStop(bc)));
            List<Object> is = List.of(
                    String.valueOf(o.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds()),
                    String.valueOf(K8sManifests.env(oc, "TANDEM_CLUSTER_SHUTDOWN_DRAIN_MS")),
                    String.valueOf(preStop(oc)));
            if (!was.equals(is)) {
                problems.add(
                        b.getMetadata().getName() + ": drain (grace, drain ms, preStop) was " + was + ", is " + is);
            }
        }
    }

    private static Object preStop(Container c) {
        Lifecycle l = c.getLifecycle();
        return l == null || l.getPreStop() == null ? null : l.getPreStop().getExec();
    }

    static List<String> problems(Render base, Render overlay) {
        List<String> problems = new ArrayList<>();
        checkTargets(overlay, problems);
        checkPace(overlay, problems);
        checkDrainKept(base, overlay, problems);
        return problems;
    }
}
