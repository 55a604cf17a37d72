package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.RawHttp;
import dev.tandem.TestNodes;
import dev.tandem.node.TandemNode;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * HTTP/2 in clear text is not served (api.md, "HTTP versions"): a client that opens with the HTTP/2 preface
 * (prior knowledge) gets an HTTP/1.1 505 with the OpenAI error body and the close, not Vert.x's empty 501;
 * HTTP/1.1 on the same port is unaffected, WebSocket upgrades included.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class Http2PriorKnowledgeTest {
    /** The client connection preface (RFC 9113, 3.4), then an empty SETTINGS frame. */
    private static final byte[] PREFACE = concat(
            "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
            new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0});

    private TandemNode node;
    private int port;
    private Vertx vertx;

    @BeforeAll
    void start() {
        node = TestNodes.startEmbedded(TestNodes.config(), 1, 1);
        port = node.router().httpPort();
        vertx = Vertx.vertx();
    }

    @AfterAll
    void stop() {
        if (vertx != null) {
            vertx.close().await();
        }
        if (node != null) {
            node.close().await();
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void thePrefaceIsAnswered505WithTheJsonErrorThenClosed() throws Exception {
        RawHttp.Response r = RawHttp.exchange(port, PREFACE, true);
        assertEquals(505, r.status(), r.head() + "\n" + r.body());
        assertTrue(r.head().startsWith("HTTP/1.1 505"), r.head());
        assertEquals("close", r.header("Connection"), r.head());
        JsonObject error = r.json().getJsonObject("error");
        assertEquals("http_version_not_supported", error.getString("code"), r.body());
        assertTrue(error.getString("message").contains("HTTP/2"), r.body());
        assertTrue(r.closed(), "the connection is still open");
    }

    @Test
    void aPrefaceSentByteByByteIsAnsweredToo() throws Exception {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            for (byte b : PREFACE) {
                try {
                    socket.getOutputStream().write(b);
                    socket.getOutputStream().flush();
                } catch (java.net.SocketException closedEarly) {
                    // The server may answer and close once it has seen the preface's request line,
                    // before the last bytes are written; its answer is still there to read.
                    break;
                }
            }
            String head = new String(socket.getInputStream().readNBytes(12), StandardCharsets.ISO_8859_1);
            assertEquals("HTTP/1.1 505", head);
        }
    }

    @Test
    void anHttp2ClientWithPriorKnowledgeFailsAtOnceInsteadOfHanging() throws Exception {
        HttpClientAgent h2 = vertx.createHttpClient(
                new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2).setHttp2ClearTextUpgrade(false));
        CompletableFuture<Integer> status = h2.request(HttpMethod.GET, port, "127.0.0.1", "/health")
                .compose(req -> req.send())
                .map(resp -> resp.statusCode())
                .toCompletionStage()
                .toCompletableFuture();
        try {
            int code = status.get(10, TimeUnit.SECONDS);
            throw new AssertionError("an HTTP/2 answer from a server that does not serve HTTP/2: " + code);
        } catch (ExecutionException e) {
            // The server's HTTP/1.1 bytes are no HTTP/2 frame: the client gives up on the connection.
        } finally {
            h2.close().await();
        }
    }

    @Test
    void http11OnTheSamePortIsUnaffected() throws Exception {
        HttpTestClient http = new HttpTestClient(port);
        assertEquals(
                200,
                http.post("/v1/completions", "{\"prompt\": \"still 1.1\", \"max_tokens\": 1}")
                        .statusCode());
        RawHttp.Response r = RawHttp.exchange(port, "GET /health HTTP/1.0\r\n\r\n");
        assertEquals(200, r.status(), r.head());
        try (WebSocketTestClient ws = WebSocketTestClient.connect(port)) {
            ws.send("{\"id\": 1, \"prompt\": \"ws\", \"max_tokens\": 1}");
            assertFalse(ws.collect(java.util.Set.of("1")).isEmpty());
        }
    }
}
