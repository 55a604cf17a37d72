package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.LogCapture;
import dev.tandem.RawHttp;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Answers sent before the request's body was read (413, 415, 401, 417) say {@code Connection: close} and close
 * the connection, so the unread rest of the body is never read as a request; and the request-read timer never
 * tries to answer a request whose response has begun. Raw sockets: a client library would hide the close.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EarlyAnswerTest {
    private static final String KEY = "early-key";
    private static final long MAX_BODY = 2048;
    private static final long READ_MS = 700;

    private TandemNode node;
    private int port;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        config = config.withHttp(TestSettings.withTimeouts(
                TestSettings.withMaxBodyBytes(TestSettings.withApiKeys(config.http(), List.of(KEY)), MAX_BODY),
                30_000,
                READ_MS));
        node = TestNodes.startEmbedded(config, 1, 1);
        port = node.router().httpPort();
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    /** A POST head announcing {@code length} body bytes, with the given extra header lines. */
    private static String head(String path, long length, String... headers) {
        StringBuilder sb = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        for (String h : headers) {
            sb.append(h).append("\r\n");
        }
        return sb.append("Content-Length: ").append(length).append("\r\n\r\n").toString();
    }

    private static void assertAnsweredThenClosed(RawHttp.Response r, int status, String code) {
        assertEquals(status, r.status(), r.head() + "\n" + r.body());
        assertEquals("close", r.header("Connection"), r.head());
        assertEquals(code, r.json().getJsonObject("error").getString("code"), r.body());
        assertTrue(r.closed(), "the connection is still open after " + r.head());
    }

    @Test
    void a413ForADeclaredLengthClosesTheConnection() throws IOException {
        String request =
                head("/v1/completions", 100_000, "Authorization: Bearer " + KEY, "Content-Type: application/json")
                        + "{\"prompt\": \"" + "a".repeat(500);
        assertAnsweredThenClosed(RawHttp.exchangeThenAwaitClose(port, request), 413, "request_too_large");
    }

    @Test
    void a413ForAChunkedBodyClosesTheConnection() throws IOException {
        String request = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + KEY
                + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + Integer.toHexString(3000) + "\r\n" + "b".repeat(3000) + "\r\n";
        assertAnsweredThenClosed(RawHttp.exchangeThenAwaitClose(port, request), 413, "request_too_large");
    }

    @Test
    void a415IsAnsweredBeforeTheBodyAndClosesTheConnection() throws IOException {
        // Only part of the declared body is sent: the media type alone decides, nothing of the body is waited for.
        String request =
                head("/v1/completions", 1000, "Authorization: Bearer " + KEY, "Content-Type: text/plain") + "not json";
        assertAnsweredThenClosed(RawHttp.exchangeThenAwaitClose(port, request), 415, "unsupported_media_type");
    }

    @Test
    void a401ClosesTheConnection() throws IOException {
        String request = head("/v1/completions", 1000, "Content-Type: application/json") + "{\"prompt\": \"";
        assertAnsweredThenClosed(RawHttp.exchangeThenAwaitClose(port, request), 401, "invalid_api_key");
    }

    @Test
    void anUnknownExpectationIs417AndClosesTheConnection() throws IOException {
        String request = head(
                        "/v1/completions",
                        20,
                        "Authorization: Bearer " + KEY,
                        "Content-Type: application/json",
                        "Expect: something-else")
                + "{\"prompt\": \"x\"}    ";
        assertAnsweredThenClosed(RawHttp.exchangeThenAwaitClose(port, request), 417, "expectation_failed");
    }

    @Test
    void anUnknownExpectationOnAGetIs417Too() throws IOException {
        // No body is left unread here, so the connection may stay open.
        RawHttp.Response r =
                RawHttp.exchange(port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 200-ok\r\n\r\n");
        assertEquals(417, r.status(), r.head());
        assertEquals("expectation_failed", r.json().getJsonObject("error").getString("code"), r.body());
    }

    @Test
    void expect100ContinueStillWorks() throws IOException {
        byte[] body = "{\"prompt\": \"go on\", \"max_tokens\": 1}".getBytes(StandardCharsets.UTF_8);
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream()
                    .write(head(
                                    "/v1/completions",
                                    body.length,
                                    "Authorization: Bearer " + KEY,
                                    "Content-Type: application/json",
                                    "Expect: 100-continue")
                            .getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            assertEquals("HTTP/1.1 100 Continue\r\n\r\n", readUntilBlankLine(in));
            socket.getOutputStream().write(body);
            String head = readUntilBlankLine(in);
            assertTrue(head.startsWith("HTTP/1.1 200"), head);
        }
    }

    @Test
    void aRequestAnsweredEarlyWhoseBodyNeverEndsGetsNoSecondAnswerNorSevereLog() throws Exception {
        try (LogCapture logs = new LogCapture(Level.WARNING);
                Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream()
                    .write((head("/v1/completions", 1000, "Content-Type: application/json") + "{\"prompt\": \"")
                            .getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            String first = readUntilBlankLine(in);
            assertTrue(first.startsWith("HTTP/1.1 401"), first);
            // Well past the read timeout: the timer must not try to answer the request a second time.
            Thread.sleep(3 * READ_MS);
            assertEquals(List.of(), logs.atLeast(Level.SEVERE));
            String rest = ClosingConnections.readUntilClosed(in);
            JsonObject error = new JsonObject(rest).getJsonObject("error");
            assertEquals("invalid_api_key", error.getString("code"), rest);
        }
    }

    private static String readUntilBlankLine(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        while (!buf.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            buf.write(b);
        }
        return buf.toString(StandardCharsets.ISO_8859_1);
    }
}
