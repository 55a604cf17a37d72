package dev.tandem.deploy;

import static dev.tandem.deploy.K8sManifests.ROLES;
import static dev.tandem.deploy.K8sManifests.ROLE_LABEL;
import static dev.tandem.deploy.K8sManifests.env;
import static dev.tandem.deploy.K8sManifests.envVar;
import static dev.tandem.deploy.K8sManifests.podLabels;
import static dev.tandem.deploy.K8sManifests.ports;
import static dev.tandem.deploy.K8sManifests.resolvePort;
import static dev.tandem.deploy.K8sManifests.text;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The checks of {@link K8sManifests#problems} on each Deployment's pod: that the Tandem node in it
 * starts in its role, passes the restricted Pod Security Standard, is scheduled with resources, binds an
 * address other pods reach, overrides only real tandem.yaml keys, answers its probes and scrapes on the
 * right port, and finds its config files in the generated ConfigMap. Each check adds its findings to {@code p}.
 */
final class K8sWorkloadChecks {

    private K8sWorkloadChecks() {}

    static void checkDeployments(K8sManifests k8s, List<String> p, Set<String> configKeys) {
        Map<String, List<String>> configMaps = k8s.generatedConfigMaps();
        for (String role : ROLES) {
            if (k8s.deploymentForRole(role) == null) {
                p.add("no Deployment has pods labelled " + ROLE_LABEL + "=" + role);
            }
        }
        for (Deployment d : k8s.all(Deployment.class)) {
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
            if (pod.getServiceAccountName() == null
                    || k8s.named(ServiceAccount.class, pod.getServiceAccountName()) == null) {
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
        boolean nonRoot = ps != null
                && Boolean.TRUE.equals(ps.getRunAsNonRoot())
                && ps.getRunAsUser() != null
                && ps.getRunAsUser() != 0;
        if (!nonRoot) {
            p.add(name + ": the pod must run as non-root (runAsNonRoot: true and a non-zero runAsUser)");
        }
        if (ps == null
                || ps.getSeccompProfile() == null
                || !"RuntimeDefault".equals(ps.getSeccompProfile().getType())) {
            p.add(name + ": seccompProfile RuntimeDefault is required by the restricted Pod Security Standard");
        }
        if (cs == null
                || !Boolean.FALSE.equals(cs.getAllowPrivilegeEscalation())
                || cs.getCapabilities() == null
                || cs.getCapabilities().getDrop() == null
                || !cs.getCapabilities().getDrop().contains("ALL")) {
            p.add(name + ": the container must set allowPrivilegeEscalation: false and drop ALL capabilities");
        }
        if (cs != null && Boolean.TRUE.equals(cs.getReadOnlyRootFilesystem())) {
            boolean tmp = c.getVolumeMounts() != null
                    && c.getVolumeMounts().stream().anyMatch(m -> "/tmp".equals(m.getMountPath()));
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
            if (req.containsKey(k)
                    && lim.containsKey(k)
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
        if (host == null
                || host.getValueFrom() == null
                || host.getValueFrom().getFieldRef() == null
                || !"status.podIP".equals(host.getValueFrom().getFieldRef().getFieldPath())) {
            p.add(name
                    + ": TANDEM_CLUSTER_HOST must come from the downward API (status.podIP): Hazelcast and the event "
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
        return us < 0
                ? null
                : rest.substring(0, us) + "." + rest.substring(us + 1).replace('_', '-');
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
        if (!"true".equals(ann.get("prometheus.io/scrape"))
                || !"/metrics".equals(ann.get("prometheus.io/path"))
                || !String.valueOf(port).equals(ann.get("prometheus.io/port"))) {
            p.add(name + ": pod annotations must say prometheus.io/scrape \"true\", path /metrics, port " + port
                    + " (have " + ann + ")");
        }
        if (ports(c).stream().noneMatch(cp -> cp.getContainerPort() == 5701 && "hazelcast".equals(cp.getName()))) {
            p.add(name + ": no container port 'hazelcast' 5701 (the headless Service targets it)");
        }
    }

    private static void checkProbe(
            List<String> p, String name, String kind, Probe probe, String path, int port, Container c) {
        if (probe == null || probe.getHttpGet() == null) {
            p.add(name + ": " + kind + " must be an HTTP GET of " + path);
            return;
        }
        if (!path.equals(probe.getHttpGet().getPath())) {
            p.add(name + ": " + kind + " hits " + probe.getHttpGet().getPath() + ", not " + path);
        }
        Integer target = resolvePort(c, probe.getHttpGet().getPort());
        if (target == null || target != port) {
            p.add(name + ": " + kind + " port " + text(probe.getHttpGet().getPort()) + " resolves to " + target
                    + ", not " + port);
        }
    }

    private static void checkConfigVolume(
            List<String> p, String name, PodSpec pod, Container c, Map<String, List<String>> configMaps) {
        List<String> args = c.getArgs() == null ? List.of() : c.getArgs();
        int i = args.indexOf("--config");
        String configFile = i >= 0 && i + 1 < args.size() ? args.get(i + 1) : null;
        String xml = env(c, "TANDEM_CLUSTER_HAZELCAST_CONFIG");
        if (xml == null) {
            p.add(name + ": TANDEM_CLUSTER_HAZELCAST_CONFIG is not set: the node would use the loopback TCP-IP config");
        }
        Map<String, Volume> volumes = pod.getVolumes() == null
                ? Map.of()
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
            VolumeMount mount = mounts.stream()
                    .filter(m -> Path.of(m.getMountPath()).equals(f.getParent()))
                    .findFirst()
                    .orElse(null);
            Volume v = mount == null ? null : volumes.get(mount.getName());
            if (v == null || v.getConfigMap() == null) {
                p.add(name + ": " + file + " is not in a mounted ConfigMap");
                continue;
            }
            List<String> keys = configMaps.get(v.getConfigMap().getName());
            if (keys == null) {
                if (reported.add(v.getName())) {
                    p.add(name + ": volume " + v.getName() + " mounts ConfigMap "
                            + v.getConfigMap().getName() + ", which kustomization.yaml does not generate (generated: "
                            + configMaps.keySet() + ")");
                }
            } else if (!keys.contains(f.getFileName().toString())) {
                p.add(name + ": ConfigMap " + v.getConfigMap().getName() + " has no key " + f.getFileName() + " (has "
                        + keys + ")");
            }
        }
    }
}
