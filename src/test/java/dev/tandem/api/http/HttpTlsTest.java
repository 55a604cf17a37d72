package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.RawHttp;
import dev.tandem.TestNodes;
import dev.tandem.TestTls;
import dev.tandem.config.ConnectionLimits;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.config.TlsSettings;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.SamplingParams;
import dev.tandem.node.TandemNode;
import dev.tandem.security.CertificateReloader;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTPS on the router (issue 33): the certificate rotated under a running stream (new connections get the new
 * one, the open stream ends on the old), a half-rotated pair never used, HTTP/2 by ALPN, client certificates,
 * the clear-text port refusing when TLS is required, and the connection limits.
 */
@Timeout(90)
class HttpTlsTest {
    /** A decode step's time: {@link #STREAM_TOKENS} of them outlast the rotation (about 4.5-6.5 s in). */
    private static final int STEP_US = 30_000;

    private static final int STREAM_TOKENS = 300;
    private TandemNode node;

    @AfterEach
    void stop() {
        TestTls.useTls(null);
        if (node != null) {
            node.close().await();
        }
    }

    private int start(TlsSettings tls, int plainPort, ConnectionLimits limits) {
        TandemConfig config = TestNodes.config();
        config = config.withHttp(config.http().withTls(tls, plainPort).withConnections(limits))
                .withModel(TestSettings.withPacing(config.model(), STEP_US, 0));
        node = TestNodes.startEmbedded(config, 1, 1);
        return node.router().httpPort();
    }

    private static String completion(int maxTokens, boolean stream) {
        return new JsonObject()
                .put("prompt", "Rotate")
                .put("max_tokens", maxTokens)
                .put("stream", stream)
                .encode();
    }

    private static String subject(Socket socket) throws IOException {
        X509Certificate leaf =
                (X509Certificate) ((SSLSocket) socket).getSession().getPeerCertificates()[0];
        return leaf.getSubjectX500Principal().getName();
    }

    private static String newConnectionSubject(int port) throws IOException {
        try (Socket s = TestTls.open(port)) {
            return subject(s);
        }
    }

    @Test
    void aRotatedCertificateServesNewConnectionsWhileAnOpenStreamEndsOnTheOld(@TempDir Path dir) throws Exception {
        Path cert = dir.resolve("tls.crt");
        Path key = dir.resolve("tls.key");
        Files.copy(Path.of(TestTls.pem("server")), cert);
        Files.copy(Path.of(TestTls.pem("server-key")), key);
        int port = start(new TlsSettings(cert.toString(), key.toString(), "", true), -1, ConnectionLimits.NONE);
        TestTls.useTls(TestTls.clientContext(false));
        assertEquals("CN=localhost", newConnectionSubject(port));

        try (Socket stream = TestTls.open(port)) {
            // Sampled with a seed whose tokens include no end of text: the stream lasts all 300 steps (9 s).
            String body = new JsonObject()
                    .put("prompt", "Rotate")
                    .put("max_tokens", STREAM_TOKENS)
                    .put("stream", true)
                    .put("temperature", 0.8)
                    .put("top_p", 0.95)
                    .put("seed", seedWithoutEarlyStop("Rotate"))
                    .encode();
            stream.getOutputStream()
                    .write(("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                                    + "Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n"
                                    + body)
                            .getBytes(StandardCharsets.UTF_8));
            BufferedReader events =
                    new BufferedReader(new InputStreamReader(stream.getInputStream(), StandardCharsets.UTF_8));
            assertTrue(events.readLine().startsWith("HTTP/1.1 200"));

            // Half a rotation (the new certificate, the old key) is never used.
            Files.copy(Path.of(TestTls.pem("server2")), cert, StandardCopyOption.REPLACE_EXISTING);
            Thread.sleep(2 * CertificateReloader.PERIOD_MS + 500);
            assertEquals("CN=localhost", newConnectionSubject(port), "a certificate without its key must not serve");
            Files.copy(Path.of(TestTls.pem("server2-key")), key, StandardCopyOption.REPLACE_EXISTING);
            TestNodes.awaitTrue(
                    () -> {
                        try {
                            return newConnectionSubject(port).equals("CN=localhost (rotated)");
                        } catch (IOException e) {
                            return false;
                        }
                    },
                    Duration.ofSeconds(10),
                    "new connections get the rotated certificate");
            assertEquals(1, node.router().requests().activeRequests(), "the stream still runs after the rotation");

            int tokens = 0;
            boolean done = false;
            for (String line; !done && (line = events.readLine()) != null; ) {
                if (line.startsWith("data: {")) {
                    tokens += new JsonObject(line.substring(6))
                            .getJsonArray("choices")
                            .getJsonObject(0)
                            .getJsonArray("token_ids", new io.vertx.core.json.JsonArray())
                            .size();
                }
                done = line.equals("data: [DONE]");
            }
            assertTrue(done, "the open stream ended normally");
            assertEquals(STREAM_TOKENS, tokens, "every token of the open stream arrived");
            assertEquals("CN=localhost", subject(stream), "the open stream kept the session it started with");
        }
    }

    /** A seed for which the model samples {@link #STREAM_TOKENS} tokens after {@code prompt} without stopping. */
    private long seedWithoutEarlyStop(String prompt) {
        // The same model unpaced (the node's engine takes 30 ms a step): its tokens are the node's.
        var engine = dev.tandem.engine.reference.ReferenceEngine.builtin(16);
        int[] tokens = engine.tokenizer().encode(prompt, true);
        for (long seed = 1; seed < 1_000; seed++) {
            int generated = new LocalGenerator(engine)
                    .generate(tokens, new SamplingParams(0.8, 0.95, 0, seed), STREAM_TOKENS, new int[0])
                    .tokens()
                    .length;
            if (generated == STREAM_TOKENS) {
                return seed;
            }
        }
        throw new AssertionError("no seed below 1000 samples " + STREAM_TOKENS + " tokens without stopping");
    }

    @Test
    void http2ByAlpnAndClientCertificates() throws Exception {
        int port = start(TestTls.server(true, true), -1, ConnectionLimits.NONE);
        HttpClient h2 = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_2)
                .sslContext(TestTls.clientContext(true))
                .build();
        for (boolean stream : new boolean[] {false, true}) {
            HttpResponse<String> r = h2.send(
                    HttpRequest.newBuilder(java.net.URI.create("https://127.0.0.1:" + port + "/v1/completions"))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(completion(3, stream)))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(HttpClient.Version.HTTP_2, r.version(), "ALPN chose HTTP/2");
            assertTrue(
                    stream ? r.body().contains("data: [DONE]") : r.body().contains("\"completion_tokens\":3"),
                    r.body());
        }
        HttpTestClient noCertificate = new HttpTestClient(port, TestTls.clientContext(false));
        assertThrows(AssertionError.class, () -> noCertificate.post("/v1/completions", completion(1, false)));
    }

    @Test
    void theClearTextPortRefusesWhenTlsIsRequiredAndTheTlsPortTakesNoClearText() throws Exception {
        int plainPort = dev.tandem.cluster.LoopbackClusterPorts.base(1);
        int port = start(TestTls.server(false, true), plainPort, ConnectionLimits.NONE);
        HttpTestClient plain = new HttpTestClient(node.router().httpListeners().plainPort());
        HttpResponse<String> refused = plain.post("/v1/completions", completion(1, false));
        assertEquals(403, refused.statusCode());
        JsonObject error = new JsonObject(refused.body()).getJsonObject("error");
        assertEquals("tls_required", error.getString("code"));
        assertTrue(
                error.getString("message").contains("https://127.0.0.1:" + port + "/v1/completions"), refused.body());
        HttpResponse<String> redirected =
                plain.send(plain.request("/v1/models").GET().build());
        assertEquals(308, redirected.statusCode());
        assertEquals(
                "https://127.0.0.1:" + port + "/v1/models",
                redirected.headers().firstValue("Location").orElse(""));
        // Clear text to the TLS port gets no HTTP answer at all.
        RawHttp.Response r = RawHttp.exchange(port, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
        assertEquals(-1, r.status(), "no HTTP status on the TLS port: " + r.head());
    }

    @Test
    void aConnectionOverTheLimitIsToldWhyAndClosed() throws Exception {
        int port = start(TlsSettings.NONE, -1, new ConnectionLimits(0, 2));
        try (Socket first = TestTls.open(port);
                Socket second = TestTls.open(port)) {
            TestNodes.awaitTrue(() -> node.router().httpListeners().connections() == 2, "two connections counted");
            RawHttp.Response third = RawHttp.exchange(port, "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n");
            assertEquals(503, third.status(), third.head());
            assertEquals(
                    "too_many_connections", third.json().getJsonObject("error").getString("code"));
            assertTrue(third.head().toLowerCase().contains("retry-after"), third.head());
        }
        TestNodes.awaitTrue(
                () -> node.router().httpListeners().connections() == 0, "closed connections give their places back");
        assertEquals(
                200,
                new HttpTestClient(port)
                        .send(new HttpTestClient(port)
                                .request("/v1/models")
                                .GET()
                                .build())
                        .statusCode());
    }
}
