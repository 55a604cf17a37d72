package dev.tandem.deploy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.junit.jupiter.api.Assumptions;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/** The TLS overlay rendered by kubectl: built-in kinds as fabric8 models, cert-manager's read strictly as records. */
final class CertManagerRender {
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

    private CertManagerRender() {}

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

    /** The namespace of the render's Deployments (the first that names one). */
    static String namespace(Render r) {
        return r.all(Deployment.class).stream()
                .map(d -> d.getMetadata().getNamespace())
                .filter(Objects::nonNull)
                .findFirst()
                .orElse(null);
    }
}
