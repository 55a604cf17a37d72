package dev.tandem.deploy;

import static dev.tandem.deploy.K8sManifests.ROLES;
import static dev.tandem.deploy.K8sManifests.ROLE_LABEL;
import static dev.tandem.deploy.K8sManifests.env;
import static dev.tandem.deploy.K8sManifests.podLabels;
import static dev.tandem.deploy.K8sManifests.resolvePort;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.ConfigException;
import dev.tandem.config.EnvOverrides;
import dev.tandem.config.TandemConfig;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
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
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * k8s/overlays/tls, rendered by kubectl: cert-manager's chain (a self-signed bootstrap Issuer, an isCA
 * Certificate, a CA Issuer issuing the rest), the cluster certificate (server and client auth) mounted
 * into every router, prefill and decode pod and named by TANDEM_CLUSTER_TLS_CERT/KEY/CA, the routers'
 * HTTP API and bridge on TLS only with HTTPS probes (the workers' ops port stays clear text), every
 * mounted Secret written by a Certificate, each pod's environment accepted by Tandem's own configuration
 * parser (with the mounted files replaced by the test certificates), and the base's generic checks still
 * passing. cert-manager's kinds have no fabric8 model here: they are read strictly into the records
 * below, so a misspelled field fails as it does for the built-in kinds. The breakages change one thing
 * each in a copy of k8s/ and show that the checks catch it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class K8sTlsOverlayTest {
    static final Path K8S = Path.of("k8s");
    static final Path OVERLAY = Path.of("overlays", "tls");
    static final Path TLS_FILES = Path.of("src", "test", "resources", "tls");
    static final String CERT_MANAGER = "cert-manager.io/v1";

    /** cert-manager's key usages (its KeyUsage enum): anything else the API server refuses. */
    static final Set<String> USAGES = Set.of(
            "signing",
            "digital signature",
            "content commitment",
            "key encipherment",
            "key agreement",
            "data encipherment",
            "cert sign",
            "crl sign",
            "encipher only",
            "decipher only",
            "any",
            "server auth",
            "client auth",
            "code signing",
            "email protection",
            "s/mime",
            "ipsec end system",
            "ipsec tunnel",
            "ipsec user",
            "timestamping",
            "ocsp signing",
            "microsoft sgc",
            "netscape sgc");

    /** The files a cert-manager Secret (kubernetes.io/tls) holds; a provided Secret must use the same keys. */
    static final Set<String> SECRET_KEYS = Set.of("tls.crt", "tls.key", "ca.crt");

    // ------------------------------------------------------------------ cert-manager's objects, read strictly

    record IssuerRef(String name, String kind, String group) {}

    record PrivateKey(String algorithm, Integer size, String encoding, String rotationPolicy) {}

    record SecretTemplate(Map<String, String> labels, Map<String, String> annotations) {}

    record CertificateSpec(
            String secretName,
            SecretTemplate secretTemplate,
            String commonName,
            List<String> dnsNames,
            List<String> ipAddresses,
            List<String> uris,
            Boolean isCA,
            String duration,
            String renewBefore,
            List<String> usages,
            PrivateKey privateKey,
            IssuerRef issuerRef) {
        List<String> usageList() {
            return usages == null ? List.of() : usages;
        }

        List<String> dnsNameList() {
            return dnsNames == null ? List.of() : dnsNames;
        }
    }

    record Certificate(String apiVersion, String kind, ObjectMeta metadata, CertificateSpec spec) {
        String name() {
            return metadata.getName();
        }
    }

    record SelfSigned(List<String> crlDistributionPoints) {}

    record CaIssuer(
            String secretName,
            List<String> crlDistributionPoints,
            List<String> ocspServers,
            List<String> issuingCertificateURLs) {}

    record IssuerSpec(SelfSigned selfSigned, CaIssuer ca) {}

    record Issuer(String apiVersion, String kind, ObjectMeta metadata, IssuerSpec spec) {
        String name() {
            return metadata.getName();
        }
    }

    /** One render: the built-in kinds as fabric8 models, cert-manager's as the records above. */
    record Render(List<HasMetadata> objects, List<Certificate> certificates, List<Issuer> issuers) {
        <T extends HasMetadata> List<T> all(Class<T> type) {
            return objects.stream().filter(type::isInstance).map(type::cast).toList();
        }

        Certificate writing(String secret) {
            return certificates.stream()
                    .filter(c -> secret.equals(c.spec().secretName()))
                    .findFirst()
                    .orElse(null);
        }

        Issuer issuer(String name) {
            return issuers.stream()
                    .filter(i -> name.equals(i.name()))
                    .findFirst()
                    .orElse(null);
        }

        ConfigMap configMap() {
            return all(ConfigMap.class).stream().findFirst().orElseThrow();
        }
    }

    static Render read(String yaml) {
        List<HasMetadata> objects = new ArrayList<>();
        List<Certificate> certificates = new ArrayList<>();
        List<Issuer> issuers = new ArrayList<>();
        int i = 0;
        for (JsonNode doc : K8sManifests.readDocuments(yaml)) {
            String where = "rendered#" + i++;
            String apiVersion = doc.path("apiVersion").asString("");
            String kind = doc.path("kind").asString("");
            if (!apiVersion.startsWith("cert-manager.io/")) {
                objects.add(K8sManifests.parse(where, doc));
                continue;
            }
            Class<?> type =
                    kind.equals("Certificate") ? Certificate.class : kind.equals("Issuer") ? Issuer.class : null;
            if (!CERT_MANAGER.equals(apiVersion) || type == null) {
                throw new IllegalArgumentException(where + ": no model for " + apiVersion + "/" + kind
                        + " (known: Certificate, Issuer of " + CERT_MANAGER + ")");
            }
            try {
                Object o = K8sManifests.STRICT.treeToValue(doc, type);
                if (o instanceof Certificate c) {
                    certificates.add(c);
                } else {
                    issuers.add((Issuer) o);
                }
            } catch (JacksonException e) {
                throw new IllegalArgumentException(where + " (" + apiVersion + "/" + kind + "): " + e.getMessage(), e);
            }
        }
        return new Render(objects, certificates, issuers);
    }

    static Render render(Path k8s) throws IOException, InterruptedException {
        Assumptions.assumeTrue(K8sManifestsTest.onPath("kubectl"), "kubectl not installed");
        return read(
                new String(K8sManifestsTest.kustomize(k8s.resolve(OVERLAY)), java.nio.charset.StandardCharsets.UTF_8));
    }

    private Render render;

    @BeforeAll
    void render() throws Exception {
        render = render(K8S);
    }

    // ------------------------------------------------------------------ the checks

    /** Every Certificate's issuer is in the render, in the Certificate's namespace; its fields are valid. */
    static void checkIssuers(Render r, List<String> p) {
        if (r.certificates().isEmpty()) {
            p.add("no cert-manager Certificate in the render");
        }
        String ns = namespace(r);
        for (Certificate c : r.certificates()) {
            String name = "Certificate " + c.name();
            IssuerRef ref = c.spec().issuerRef();
            if (ref == null || ref.name() == null) {
                p.add(name + " has no issuerRef");
            } else if (!Objects.requireNonNullElse(ref.kind(), "Issuer").equals("Issuer")
                    || !Objects.requireNonNullElse(ref.group(), "cert-manager.io")
                            .equals("cert-manager.io")) {
                p.add(name + "'s issuerRef is a " + ref.group() + " " + ref.kind() + ", not an Issuer of the overlay");
            } else if (r.issuer(ref.name()) == null) {
                p.add(name + "'s issuerRef names Issuer " + ref.name() + ", which is not in the render (has "
                        + r.issuers().stream().map(Issuer::name).toList() + ")");
            }
            if (c.spec().secretName() == null || c.spec().secretName().isBlank()) {
                p.add(name + " has no secretName");
            }
            for (String u : c.spec().usageList()) {
                if (!USAGES.contains(u)) {
                    p.add(name + ": unknown usage " + u + " (cert-manager's: " + new TreeSet<>(USAGES) + ")");
                }
            }
            PrivateKey key = c.spec().privateKey();
            if (key != null
                    && key.algorithm() != null
                    && !Set.of("RSA", "ECDSA").contains(key.algorithm())) {
                p.add(name + ": private key algorithm " + key.algorithm() + " (Tandem reads RSA and ECDSA keys)");
            }
            if (key != null
                    && key.encoding() != null
                    && !Set.of("PKCS1", "PKCS8").contains(key.encoding())) {
                p.add(name + ": private key encoding " + key.encoding() + " is not PKCS1 or PKCS8");
            }
            for (String d : Stream.of(c.spec().duration(), c.spec().renewBefore())
                    .filter(Objects::nonNull)
                    .toList()) {
                if (!d.matches("(\\d+(\\.\\d+)?(h|m|s|ms))+")) {
                    p.add(name + ": " + d + " is not a Go duration (e.g. 2160h)");
                }
            }
        }
        Stream.concat(
                        r.certificates().stream()
                                .map(c -> "Certificate " + c.name() + "@"
                                        + c.metadata().getNamespace()),
                        r.issuers().stream()
                                .map(i -> "Issuer " + i.name() + "@"
                                        + i.metadata().getNamespace()))
                .filter(s -> !s.endsWith("@" + ns))
                .forEach(s -> p.add(s + " is not in namespace " + ns + ", where the pods mount its Secret"));
        for (Issuer i : r.issuers()) {
            boolean selfSigned = i.spec() != null && i.spec().selfSigned() != null;
            boolean ca = i.spec() != null && i.spec().ca() != null;
            if (selfSigned == ca) {
                p.add("Issuer " + i.name() + " must be either selfSigned or ca");
            }
        }
    }

    /**
     * A CA Issuer signs with the Secret of an isCA Certificate, which a self-signed Issuer issued, and every
     * other Certificate comes from a CA Issuer: so each issued Secret's ca.crt is a CA that members trust.
     */
    static void checkCaChain(Render r, List<String> p) {
        List<Issuer> caIssuers = r.issuers().stream()
                .filter(i -> i.spec() != null && i.spec().ca() != null)
                .toList();
        if (caIssuers.isEmpty()) {
            p.add("no CA Issuer (spec.ca) in the render");
        }
        if (r.certificates().stream()
                .noneMatch(c -> Boolean.TRUE.equals(c.spec().isCA()))) {
            p.add("no Certificate with isCA: true in the render");
        }
        for (Issuer i : caIssuers) {
            String secret = i.spec().ca().secretName();
            Certificate ca = secret == null ? null : r.writing(secret);
            if (ca == null || !Boolean.TRUE.equals(ca.spec().isCA())) {
                p.add("Issuer " + i.name() + " signs with Secret " + secret + ", which no isCA Certificate writes");
            } else {
                Issuer bootstrap = ca.spec().issuerRef() == null
                        ? null
                        : r.issuer(ca.spec().issuerRef().name());
                if (bootstrap == null
                        || bootstrap.spec() == null
                        || bootstrap.spec().selfSigned() == null) {
                    p.add("CA Certificate " + ca.name() + " should come from a selfSigned Issuer (the bootstrap)");
                }
            }
        }
        for (Certificate c : r.certificates()) {
            if (Boolean.TRUE.equals(c.spec().isCA()) || c.spec().issuerRef() == null) {
                continue;
            }
            Issuer i = r.issuer(c.spec().issuerRef().name());
            if (i != null && (i.spec() == null || i.spec().ca() == null)) {
                p.add("Certificate " + c.name() + " comes from Issuer " + i.name()
                        + ", not a CA Issuer: a self-signed leaf's ca.crt is itself, which no peer trusts");
            }
        }
    }

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

    /** Every Secret a pod mounts is written by a Certificate of the render (or, without cert-manager, by you). */
    static void checkMountedSecretsAreIssued(Render r, List<String> p) {
        for (Deployment d : r.all(Deployment.class)) {
            for (Volume v : d.getSpec().getTemplate().getSpec().getVolumes()) {
                if (v.getSecret() != null && r.writing(v.getSecret().getSecretName()) == null) {
                    p.add("Deployment " + d.getMetadata().getName() + " mounts Secret "
                            + v.getSecret().getSecretName()
                            + ", which no Certificate writes (secretNames: "
                            + r.certificates().stream()
                                    .map(c -> c.spec().secretName())
                                    .toList() + ")");
                }
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

    // ------------------------------------------------------------------ the tests

    private static List<String> run(java.util.function.BiConsumer<Render, List<String>> check, Render r) {
        List<String> p = new ArrayList<>();
        check.accept(r, p);
        return p;
    }

    @Test
    void everyCertificateComesFromAnIssuerOfTheRenderThroughTheCaChain() {
        assertEquals(List.of(), run(K8sTlsOverlayTest::checkIssuers, render));
        assertEquals(List.of(), run(K8sTlsOverlayTest::checkCaChain, render));
        assertEquals(2, render.issuers().size(), "the bootstrap and the CA issuer");
        assertEquals(3, render.certificates().size(), "the CA, the routers' and the cluster members'");
    }

    @Test
    void everyNodeMountsTheClusterCertificateAndNamesItsFiles() {
        assertEquals(List.of(), run(K8sTlsOverlayTest::checkClusterTls, render));
    }

    @Test
    void theRoutersServeTlsOnlyAndTheirProbesUseHttps() {
        assertEquals(List.of(), run(K8sTlsOverlayTest::checkRouterTls, render));
    }

    @Test
    void everyMountedSecretIsWrittenByACertificate() {
        assertEquals(List.of(), run(K8sTlsOverlayTest::checkMountedSecretsAreIssued, render));
    }

    @Test
    void tandemAcceptsEachPodsEnvironment() {
        List<String> p = new ArrayList<>();
        Set<String> accepted = checkConfigParses(render, p);
        assertEquals(List.of(), p);
        assertTrue(
                accepted.containsAll(List.of(
                        "cluster.tls-cert",
                        "cluster.tls-key",
                        "cluster.tls-ca",
                        "http.tls-cert",
                        "http.tls-key",
                        "http.tls-required")),
                accepted.toString());
    }

    @Test
    void theBasesGenericChecksStillPass(@TempDir Path tmp) throws IOException {
        List<String> p = new ArrayList<>();
        Set<String> accepted = checkConfigParses(render, p);
        checkGeneric(render, p, accepted, tmp);
        assertEquals(List.of(), p);
    }

    /** One breakage each: overlay file, the exact text replaced (first occurrence), its replacement, a fragment. */
    static Stream<Arguments> breakages() {
        return Stream.of(
                Arguments.of(
                        "certificates.yaml",
                        "  issuerRef:\n    name: tandem-ca",
                        "  issuerRef:\n    name: tandem-issuer",
                        "names Issuer tandem-issuer, which is not in the render"),
                Arguments.of("certificates.yaml", "  isCA: true\n", "", "no Certificate with isCA: true"),
                Arguments.of("certificates.yaml", "    - client auth\n", "", "both server auth and client auth"),
                Arguments.of(
                        "certificates.yaml",
                        "  secretName: tandem-cluster-tls",
                        "  secretName: tandem-cluster-certs",
                        "Secret tandem-cluster-tls, which no Certificate writes"),
                Arguments.of(
                        "cluster-tls.yaml",
                        "/etc/tandem-tls/cluster/ca.crt",
                        "/etc/tandem-tls/cluster/ca.pem",
                        "names ca.pem, which the Secret does not provide"),
                Arguments.of(
                        "cluster-tls.yaml", "TANDEM_CLUSTER_TLS_CA\n", "TANDEM_CLUSTER_TLS_CACERT\n", "tls-cacert"),
                Arguments.of(
                        "kustomization.yaml",
                        "tandem.dev/role in (router,prefill,decode)",
                        "tandem.dev/role in (router,prefill)",
                        "Deployment tandem-decode does not set TANDEM_CLUSTER_TLS_CERT"),
                Arguments.of(
                        "router-tls.yaml",
                        "- name: TANDEM_HTTP_TLS_REQUIRED",
                        "- name: TANDEM_HTTP_TLS_REQUIRE",
                        "http.tls-require"));
    }

    @ParameterizedTest(name = "{0}: {3}")
    @MethodSource("breakages")
    void eachBreakageIsCaught(String file, String from, String to, String expected, @TempDir Path tmp)
            throws Exception {
        Assumptions.assumeTrue(K8sManifestsTest.onPath("kubectl"), "kubectl not installed");
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
            problems = problems(render(copy), tmp);
        } catch (IllegalArgumentException | AssertionError e) {
            problems = List.of(String.valueOf(e.getMessage()));
        }
        final List<String> found = problems;
        assertTrue(
                found.stream().anyMatch(p -> p.contains(expected)),
                () -> "breaking " + file + " (" + from.strip() + " -> " + to.strip() + ") should report '" + expected
                        + "'; got " + found);
    }

    @Test
    void theUnbrokenCopyHasNoProblems(@TempDir Path tmp) throws Exception {
        assertEquals(List.of(), problems(render, tmp));
    }

    // ------------------------------------------------------------------ helpers

    private static String namespace(Render r) {
        return r.all(Deployment.class).stream()
                .map(d -> d.getMetadata().getNamespace())
                .filter(Objects::nonNull)
                .findFirst()
                .orElse(null);
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
