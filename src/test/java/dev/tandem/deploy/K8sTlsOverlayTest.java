package dev.tandem.deploy;

import static dev.tandem.deploy.CertManagerRender.K8S;
import static dev.tandem.deploy.CertManagerRender.OVERLAY;
import static dev.tandem.deploy.K8sTlsPodChecks.checkConfigParses;
import static dev.tandem.deploy.K8sTlsPodChecks.checkGeneric;
import static dev.tandem.deploy.K8sTlsPodChecks.problems;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.deploy.CertManagerRender.Render;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * k8s/overlays/tls, rendered by kubectl: cert-manager's chain (a self-signed bootstrap Issuer, an isCA
 * Certificate, a CA Issuer issuing the rest), the cluster certificate (server and client auth) mounted
 * into every router, prefill and decode pod and named by TANDEM_CLUSTER_TLS_CERT/KEY/CA, the routers'
 * HTTP API and bridge on TLS only with HTTPS probes (the workers' ops port stays clear text), every
 * mounted Secret written by a Certificate, each pod's environment accepted by Tandem's own configuration
 * parser (with the mounted files replaced by the test certificates), and the base's generic checks still
 * passing. cert-manager's kinds have no fabric8 model here: they are read strictly into the records of
 * {@link CertManagerRender}, so a misspelled field fails as it does for the built-in kinds. The breakages
 * change one thing each in a copy of k8s/ and show that the checks catch it. The checks are in
 * {@link K8sCertificateChecks} and {@link K8sTlsPodChecks}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class K8sTlsOverlayTest {
    private Render render;

    @BeforeAll
    void render() throws Exception {
        render = CertManagerRender.render(K8S);
    }

    // ------------------------------------------------------------------ the tests

    private static List<String> run(java.util.function.BiConsumer<Render, List<String>> check, Render r) {
        List<String> p = new ArrayList<>();
        check.accept(r, p);
        return p;
    }

    @Test
    void everyCertificateComesFromAnIssuerOfTheRenderThroughTheCaChain() {
        assertEquals(List.of(), run(K8sCertificateChecks::checkIssuers, render));
        assertEquals(List.of(), run(K8sCertificateChecks::checkCaChain, render));
        assertEquals(2, render.issuers().size(), "the bootstrap and the CA issuer");
        assertEquals(3, render.certificates().size(), "the CA, the routers' and the cluster members'");
    }

    @Test
    void everyNodeMountsTheClusterCertificateAndNamesItsFiles() {
        assertEquals(List.of(), run(K8sTlsPodChecks::checkClusterTls, render));
    }

    @Test
    void theRoutersServeTlsOnlyAndTheirProbesUseHttps() {
        assertEquals(List.of(), run(K8sTlsPodChecks::checkRouterTls, render));
    }

    @Test
    void everyMountedSecretIsWrittenByACertificate() {
        assertEquals(List.of(), run(K8sCertificateChecks::checkMountedSecretsAreIssued, render));
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
            problems = problems(CertManagerRender.render(copy), tmp);
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
