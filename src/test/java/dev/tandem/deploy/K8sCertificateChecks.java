package dev.tandem.deploy;

import static dev.tandem.deploy.CertManagerRender.USAGES;
import static dev.tandem.deploy.CertManagerRender.namespace;

import dev.tandem.deploy.CertManagerRender.Certificate;
import dev.tandem.deploy.CertManagerRender.Issuer;
import dev.tandem.deploy.CertManagerRender.IssuerRef;
import dev.tandem.deploy.CertManagerRender.PrivateKey;
import dev.tandem.deploy.CertManagerRender.Render;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/** The TLS overlay's checks of cert-manager's objects: Issuers, the CA chain, and the Secrets the pods mount. */
final class K8sCertificateChecks {

    private K8sCertificateChecks() {}

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
}
