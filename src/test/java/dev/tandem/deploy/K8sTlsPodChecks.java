package dev.tandem.deploy;

import static dev.tandem.deploy.CertManagerRender.K8S;
import static dev.tandem.deploy.CertManagerRender.OVERLAY;
import static dev.tandem.deploy.CertManagerRender.SECRET_KEYS;
import static dev.tandem.deploy.CertManagerRender.TLS_FILES;
import static dev.tandem.deploy.CertManagerRender.namespace;
import static dev.tandem.deploy.K8sCertificateChecks.checkCaChain;
import static dev.tandem.deploy.K8sCertificateChecks.checkIssuers;
import static dev.tandem.deploy.K8sCertificateChecks.checkMountedSecretsAreIssued;
import static dev.tandem.deploy.K8sManifests.ROLES;
import static dev.tandem.deploy.K8sManifests.ROLE_LABEL;
import static dev.tandem.deploy.K8sManifests.env;
import static dev.tandem.deploy.K8sManifests.podLabels;
import static dev.tandem.deploy.K8sManifests.resolvePort;

import dev.tandem.config.ConfigException;
import dev.tandem.config.EnvOverrides;
import dev.tandem.config.TandemConfig;
import dev.tandem.deploy.CertManagerRender.Certificate;
import dev.tandem.deploy.CertManagerRender.Render;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/** The TLS overlay's checks of the pods: cluster and router TLS, the environment Tandem parses, the base's checks. */
final class K8sTlsPodChecks {

    private K8sTlsPodChecks() {}

    /** A file the container reads from a mounted Secret: the env var's value resolved through the pod's volumes. */
    record SecretFile(String secret, String key, VolumeMount mount, Volume volume) {}

    /** Where env var {@code name} points into a mounted Secret; null (with a problem added) when it does not. */
    static SecretFile secretFile(Deployment d, String name, List<String> p) {
        String what = "Deployment " + d.getMetadata().getName();
        Container c = K8sManifests.container(d);
        String value = env(c, name);
        if (value == null) {
            p.add(what + " does not set " + name);
            return null;
        }
        Path file = Path.of(value);
        VolumeMount mount = c.getVolumeMounts() == null
                ? null
                : c.getVolumeMounts().stream()
                        .filter(m -> file.getParent() != null
                                && Path.of(m.getMountPath()).equals(file.getParent()))
                        .findFirst()
                        .orElse(null);
        Volume volume = mount == null
                ? null
                : d.getSpec().getTemplate().getSpec().getVolumes().stream()
                        .filter(v -> v.getName().equals(mount.getName()))
                        .findFirst()
                        .orElse(null);
        if (volume == null || volume.getSecret() == null) {
            p.add(what + ": " + name + "=" + value + " is not in a mounted Secret");
            return null;
        }
        String key = file.getFileName().toString();
        if (!SECRET_KEYS.contains(key)) {
            p.add(what + ": " + name + "=" + value + " names " + key + ", which the Secret does not provide (it has "
                    + new TreeSet<>(SECRET_KEYS) + ")");
        }
        if (volume.getSecret().getItems() != null
                && !volume.getSecret().getItems().isEmpty()) {
            p.add(what + ": volume " + volume.getName() + " picks items of its Secret: mount the whole Secret");
        }
        if (!Boolean.TRUE.equals(mount.getReadOnly())) {
            p.add(what + ": the Secret volume " + mount.getName() + " must be mounted read-only");
        }
        if (mount.getSubPath() != null || mount.getSubPathExpr() != null) {
            p.add(what + ": the Secret volume " + mount.getName()
                    + " is mounted with subPath, which never sees a renewed certificate");
        }
        return new SecretFile(volume.getSecret().getSecretName(), key, mount, volume);
    }

    /** The env vars of one certificate, key and CA and the Secret key each must name. */
    static final Map<String, String> CLUSTER_ENV = orderedMap(
            "TANDEM_CLUSTER_TLS_CERT",
            "tls.crt",
            "TANDEM_CLUSTER_TLS_KEY",
            "tls.key",
            "TANDEM_CLUSTER_TLS_CA",
            "ca.crt");

    static final Map<String, String> HTTP_ENV =
            orderedMap("TANDEM_HTTP_TLS_CERT", "tls.crt", "TANDEM_HTTP_TLS_KEY", "tls.key");

    /** Every router, prefill and decode pod mounts the cluster certificate's Secret and names its three files. */
    static void checkClusterTls(Render r, List<String> p) {
        List<Certificate> members = r.certificates().stream()
                .filter(c -> c.spec().usageList().containsAll(List.of("server auth", "client auth")))
                .toList();
        if (members.size() != 1) {
            p.add("expected one Certificate for the cluster members with both server auth and client auth usages,"
                    + " found " + members.stream().map(Certificate::name).toList());
            return;
        }
        String secret = members.get(0).spec().secretName();
        Set<String> roles = new TreeSet<>();
        for (Deployment d : r.all(Deployment.class)) {
            String role = podLabels(d).get(ROLE_LABEL);
            if (!ROLES.contains(role)) {
                continue;
            }
            roles.add(role);
            List<SecretFile> files = new ArrayList<>();
            CLUSTER_ENV.forEach((name, key) -> {
                SecretFile f = secretFile(d, name, p);
                if (f == null) {
                    return;
                }
                files.add(f);
                if (!secret.equals(f.secret())) {
                    p.add("Deployment " + d.getMetadata().getName() + ": " + name + " is in Secret " + f.secret()
                            + ", not the cluster certificate's " + secret);
                }
                if (!key.equals(f.key())) {
                    p.add("Deployment " + d.getMetadata().getName() + ": " + name + " names " + f.key() + ", not "
                            + key);
                }
            });
        }
        for (String role : ROLES) {
            if (!roles.contains(role)) {
                p.add("no " + role + " Deployment in the render");
            }
        }
    }

    /**
     * The routers serve their HTTP API (and bridge) over TLS only, from a server certificate for their
     * Service's names, and the probes and scrapes of that port speak HTTPS; the workers' ops port stays HTTP.
     */
    static void checkRouterTls(Render r, List<String> p) {
        String ns = namespace(r);
        for (Deployment d : r.all(Deployment.class)) {
            String role = podLabels(d).get(ROLE_LABEL);
            String name = "Deployment " + d.getMetadata().getName();
            Container c = K8sManifests.container(d);
            Map<String, String> ann = d.getSpec().getTemplate().getMetadata().getAnnotations();
            String scrapeScheme = ann == null ? null : ann.get("prometheus.io/scheme");
            if (!"router".equals(role)) {
                if (ROLES.contains(role)) {
                    String ops = env(c, "TANDEM_WORKER_HTTP_PORT");
                    probes(c).forEach((kind, probe) -> {
                        if (probe.getHttpGet() != null
                                && ops != null
                                && ops.equals(String.valueOf(
                                        resolvePort(c, probe.getHttpGet().getPort())))
                                && !Objects.requireNonNullElse(
                                                probe.getHttpGet().getScheme(), "HTTP")
                                        .equals("HTTP")) {
                            p.add(name + ": " + kind + " must use HTTP: the worker's ops port stays clear text");
                        }
                    });
                    if (scrapeScheme != null && !scrapeScheme.equals("http")) {
                        p.add(name + ": prometheus.io/scheme " + scrapeScheme + ", the ops port stays clear text");
                    }
                }
                continue;
            }
            for (Map.Entry<String, String> e : HTTP_ENV.entrySet()) {
                SecretFile f = secretFile(d, e.getKey(), p);
                if (f == null) {
                    continue;
                }
                if (!e.getValue().equals(f.key())) {
                    p.add(name + ": " + e.getKey() + " names " + f.key() + ", not " + e.getValue());
                }
                Certificate cert = r.writing(f.secret());
                if (cert != null && !cert.spec().usageList().contains("server auth")) {
                    p.add(name + ": " + e.getKey() + " comes from Certificate " + cert.name()
                            + ", which has no server auth usage");
                }
                if (cert != null) {
                    for (Service s : r.all(Service.class)) {
                        Map<String, String> sel = s.getSpec().getSelector();
                        if (sel == null
                                || !podLabels(d).entrySet().containsAll(sel.entrySet())
                                || !"router".equals(sel.get(ROLE_LABEL))) {
                            continue;
                        }
                        String svc = s.getMetadata().getName();
                        for (String dns : List.of(svc, svc + "." + ns + ".svc")) {
                            if (!cert.spec().dnsNameList().contains(dns)) {
                                p.add("Certificate " + cert.name() + " serves Service " + svc
                                        + ", but its dnsNames lack " + dns + " (have "
                                        + cert.spec().dnsNameList()
                                        + ")");
                            }
                        }
                    }
                }
            }
            if (!"true".equals(env(c, "TANDEM_HTTP_TLS_REQUIRED"))) {
                p.add(name + ": TANDEM_HTTP_TLS_REQUIRED must be \"true\" (is " + env(c, "TANDEM_HTTP_TLS_REQUIRED")
                        + "): a router without its certificate must not start in clear text");
            }
            if (env(c, "TANDEM_HTTP_PLAIN_PORT") != null) {
                p.add(name + ": TANDEM_HTTP_PLAIN_PORT beside required TLS only refuses requests");
            }
            String api = env(c, "TANDEM_HTTP_PORT");
            probes(c).forEach((kind, probe) -> {
                if (probe.getHttpGet() != null
                        && String.valueOf(resolvePort(c, probe.getHttpGet().getPort()))
                                .equals(api)
                        && !"HTTPS".equals(probe.getHttpGet().getScheme())) {
                    p.add(name + ": " + kind + " hits the API port " + api + " with scheme "
                            + probe.getHttpGet().getScheme() + ", not HTTPS");
                }
            });
            if (!"https".equals(scrapeScheme)) {
                p.add(name + ": /metrics is on the API port: prometheus.io/scheme must be https (is " + scrapeScheme
                        + ")");
            }
        }
    }

    /**
     * Each pod's TANDEM_* environment over the mounted tandem.yaml, parsed by Tandem's own configuration
     * code: an unknown key or a bad value fails as the pod would at start. Files in mounted Secrets are
     * replaced by the test certificates (cluster: node.pem, node-key.pem, cluster-ca.pem; HTTP: server.pem,
     * server-key.pem, ca.pem), and the parsed configuration must have TLS where the overlay promises it.
     *
     * @return the config keys the environment set and the parser accepted
     */
    static Set<String> checkConfigParses(Render r, List<String> p) {
        Set<String> accepted = new TreeSet<>();
        JsonObject file = new JsonObject(
                K8sManifests.readDocuments(r.configMap().getData().get("tandem.yaml"))
                        .get(0)
                        .toString());
        for (Deployment d : r.all(Deployment.class)) {
            String name = "Deployment " + d.getMetadata().getName();
            String role = podLabels(d).get(ROLE_LABEL);
            Container c = K8sManifests.container(d);
            Map<String, String> env = new LinkedHashMap<>();
            for (EnvVar e : c.getEnv() == null ? List.<EnvVar>of() : c.getEnv()) {
                String value = e.getValue();
                if (value == null && e.getValueFrom() != null) {
                    value = "10.0.0.1"; // the downward API's pod IP (or name): a value only the pod knows
                }
                List<String> ignored = new ArrayList<>();
                SecretFile f = value != null && value.startsWith("/") ? secretFile(d, e.getName(), ignored) : null;
                if (f != null) {
                    Certificate cert = r.writing(f.secret());
                    boolean member = cert != null && cert.spec().usageList().contains("client auth");
                    String local = switch (f.key()) {
                        case "tls.crt" -> member ? "node.pem" : "server.pem";
                        case "tls.key" -> member ? "node-key.pem" : "server-key.pem";
                        case "ca.crt" -> member ? "cluster-ca.pem" : "ca.pem";
                        default -> null;
                    };
                    if (local != null) {
                        value = TLS_FILES.resolve(local).toString();
                    }
                }
                env.put(e.getName(), value);
            }
            TandemConfig config;
            EnvOverrides.Applied applied;
            try {
                applied = EnvOverrides.apply(file, env);
                config = applied.parse();
            } catch (ConfigException e) {
                p.add(name + ": Tandem refuses its environment: " + e.getMessage());
                continue;
            }
            accepted.addAll(applied.origins().keySet());
            if (ROLES.contains(role) && !config.cluster().tls().enabled()) {
                p.add(name + ": the parsed configuration has no cluster TLS");
            }
            if ("router".equals(role)
                    && !(config.http().tls().enabled()
                            && config.http().tls().required()
                            && config.bridge().tls().enabled())) {
                p.add(name + ": the parsed configuration does not require TLS on the HTTP API and the bridge: "
                        + config.http().tls() + ", " + config.bridge().tls());
            }
        }
        return accepted;
    }

    /**
     * The base's generic checks ({@link K8sWorkloadChecks}, {@link K8sClusterChecks}) on the rendered objects;
     * the config keys the TANDEM_* variables may name are the mounted tandem.yaml's and those Tandem's
     * parser accepted from the pods' environment ({@link #checkConfigParses}).
     */
    static void checkGeneric(Render r, List<String> p, Set<String> acceptedKeys, Path tmp) throws IOException {
        K8sManifests m = K8sManifests.rendered(K8S.resolve(OVERLAY), r.objects());
        Path dir = Files.createTempDirectory(tmp, "config");
        for (Map.Entry<String, String> e : r.configMap().getData().entrySet()) {
            Files.writeString(dir.resolve(e.getKey()), e.getValue());
        }
        Set<String> keys = new TreeSet<>(K8sManifests.configKeys(dir.resolve("tandem.yaml")));
        keys.addAll(acceptedKeys);
        String image = K8sManifestsTest.imageFromPom();
        K8sClusterChecks.checkNamespaces(m, p);
        K8sClusterChecks.checkUniqueNames(m, p);
        K8sClusterChecks.checkImages(m, p, image);
        K8sClusterChecks.checkRbac(m, p);
        K8sWorkloadChecks.checkDeployments(m, p, keys);
        K8sClusterChecks.checkServices(m, p, K8sManifestsTest.discovery(dir.resolve("cluster-k8s.xml")));
        K8sClusterChecks.checkDisruptionBudgets(m, p);
        K8sClusterChecks.checkAutoscalers(m, p);
    }

    static List<String> problems(Render r, Path tmp) throws IOException {
        List<String> p = new ArrayList<>();
        checkIssuers(r, p);
        checkCaChain(r, p);
        checkClusterTls(r, p);
        checkRouterTls(r, p);
        checkMountedSecretsAreIssued(r, p);
        Set<String> accepted = checkConfigParses(r, p);
        checkGeneric(r, p, accepted, tmp);
        return p;
    }

    private static Map<String, Probe> probes(Container c) {
        Map<String, Probe> out = new LinkedHashMap<>();
        if (c.getStartupProbe() != null) {
            out.put("startupProbe", c.getStartupProbe());
        }
        if (c.getLivenessProbe() != null) {
            out.put("livenessProbe", c.getLivenessProbe());
        }
        if (c.getReadinessProbe() != null) {
            out.put("readinessProbe", c.getReadinessProbe());
        }
        return out;
    }

    private static Map<String, String> orderedMap(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }
}
