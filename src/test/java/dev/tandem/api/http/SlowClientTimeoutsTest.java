package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.bridge.BridgeTestClient;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Clients that trickle bytes or say nothing (issue 17, item 8): every surface closes them after its idle
 * or read timeout, saying why where the protocol can. The timeouts are short here; the waits are hang
 * guards (a client that is never closed fails by running out of them), not timed assertions.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SlowClientTimeoutsTest {
    private static final long IDLE_MS = 1500;
    private static final long READ_MS = 600;
    /** Each trickling client sends one byte this often: never idle, never done. */
    private static final long TRICKLE_MS = 100;
    /** Far more trickles than any timeout allows; a client still open after them fails the test. */
    private static final int MAX_TRICKLES = 300;

    private TandemNode node;
    private int httpPort;
    private int bridgePort;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        config = config.withHttp(TestSettings.withTimeouts(config.http(), IDLE_MS, READ_MS))
                .withBridge(TestSettings.withTimeouts(config.bridge().withTcpPort(0), IDLE_MS, READ_MS));
        node = TestNodes.startEmbedded(config, 1, 1);
        httpPort = node.router().httpPort();
        bridgePort = node.router().bridge().tcpPort();
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private static boolean closed(BridgeTestClient c) {
        return c.firstUnread(f -> "<eof>".equals(f.getString("type"))) != null;
    }

    private static JsonObject err(BridgeTestClient c, String code) {
        return c.firstUnread(f -> "err".equals(f.getString("type")) && code.equals(f.getString("message")));
    }

    @Test
    void twentyBridgeClientsTricklingOneFrameAreClosedWithFrameTimeout() throws Exception {
        List<BridgeTestClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                BridgeTestClient c = BridgeTestClient.connect(bridgePort);
                c.writeRaw(new byte[] {0, 0, 0, 100}); // a 100-byte frame, then one byte at a time
                clients.add(c);
            }
            for (int t = 0; t < MAX_TRICKLES && !clients.stream().allMatch(SlowClientTimeoutsTest::closed); t++) {
                for (BridgeTestClient c : clients) {
                    trickle(c, (byte) ' ');
                }
                Thread.sleep(TRICKLE_MS);
            }
            for (BridgeTestClient c : clients) {
                assertTrue(closed(c), "a trickling bridge client is still open");
                assertNotNull(err(c, "frame_timeout"), "closed with a frame_timeout err frame");
            }
        } finally {
            for (BridgeTestClient c : clients) {
                c.close();
            }
        }
        TestNodes.awaitTrue(() -> node.router().bridge().connections() == 0, "the connections to be forgotten");
    }

    @Test
    void aFrameHeaderAnnouncing2to31BytesIsRefusedThenCutOff() throws Exception {
        try (BridgeTestClient c = BridgeTestClient.connect(bridgePort)) {
            c.writeRaw(new byte[] {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff});
            assertEquals("frame_too_large", c.awaitErr().getString("message"));
            for (int t = 0; t < MAX_TRICKLES && !closed(c); t++) {
                trickle(c, (byte) 'x');
                Thread.sleep(TRICKLE_MS);
            }
            assertTrue(closed(c), "the connection swallowing the announced 2 GiB is still open");
            assertNotNull(err(c, "frame_timeout"), "closed with a frame_timeout err frame");
        }
    }

    @Test
    void aSilentBridgeClientIsClosedWithIdleTimeout() throws Exception {
        try (BridgeTestClient c = BridgeTestClient.connect(bridgePort)) {
            assertTrue(c.awaitClosed(), "a silent bridge client is still open");
            assertNotNull(err(c, "idle_timeout"), "closed with an idle_timeout err frame");
        }
    }

    @Test
    void anHttpBodyTrickledSlowerThanTheReadTimeoutGets408() throws Exception {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), httpPort)) {
            socket.setSoTimeout(15_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            + "Content-Length: 1000\r\n\r\n{\"prompt\": \"")
                    .getBytes(StandardCharsets.US_ASCII));
            String answer = trickleUntilAnswered(socket, 'a');
            assertTrue(answer.startsWith("HTTP/1.1 408"), answer);
            JsonObject error = new JsonObject(answer.substring(answer.indexOf("\r\n\r\n") + 4)).getJsonObject("error");
            assertEquals("request_timeout", error.getString("code"), answer);
        }
    }

    @Test
    void anHttpRequestHeadTrickledSlowerThanTheReadTimeoutIsClosed() throws Exception {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), httpPort)) {
            socket.setSoTimeout(15_000);
            socket.getOutputStream().write("GET /health HTTP/1.1\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
            assertEquals("", trickleUntilAnswered(socket, 'b'), "closed without an answer: no request arrived");
        }
    }

    @Test
    void anIdleKeepAliveConnectionIsClosed() throws Exception {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), httpPort)) {
            socket.setSoTimeout(15_000);
            socket.getOutputStream()
                    .write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            String head = readAll(in);
            assertTrue(head.startsWith("HTTP/1.1 200"), head);
        }
    }

    @Test
    void aWebSocketMessageTrickledInFragmentsIsClosedWith1008() throws Exception {
        try (RawWebSocket ws = RawWebSocket.connect(httpPort, "/v1/stream")) {
            ws.frame(false, 0, RawWebSocket.TEXT, "{\"id\": 1, \"prompt\": \"".getBytes(StandardCharsets.UTF_8));
            RawWebSocket.Frame close = null;
            Thread reader = null;
            List<RawWebSocket.Frame> got = new ArrayList<>();
            reader = new Thread(() -> {
                try {
                    got.add(ws.awaitClose());
                } catch (IOException e) {
                    got.add(null);
                }
            });
            reader.start();
            for (int t = 0; t < MAX_TRICKLES && reader.isAlive(); t++) {
                try {
                    ws.frame(false, 0, 0, new byte[] {'a'});
                } catch (SocketException e) {
                    break;
                }
                Thread.sleep(TRICKLE_MS);
            }
            reader.join(15_000);
            close = got.isEmpty() ? null : got.get(0);
            assertNotNull(close, "a close frame");
            assertEquals(1008, close.code(), close.reason());
        }
        assertEquals(0, node.router().requests().activeRequests());
        new HttpTestClient(httpPort).post("/v1/completions", "{\"prompt\": \"still\", \"max_tokens\": 1}");
    }

    private static void trickle(BridgeTestClient c, byte b) {
        try {
            c.writeRaw(new byte[] {b});
        } catch (IOException e) {
            // closed by the server: what the test waits for
        }
    }

    /** Sends one byte per trickle period until the server answers or closes; returns what it sent. */
    private static String trickleUntilAnswered(Socket socket, char filler) throws Exception {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        for (int t = 0; t < MAX_TRICKLES; t++) {
            if (in.available() > 0) {
                return readAll(in);
            }
            try {
                out.write(filler);
                out.flush();
            } catch (SocketException e) {
                return readAll(in);
            }
            Thread.sleep(TRICKLE_MS);
        }
        throw new AssertionError("neither answered nor closed after " + MAX_TRICKLES + " trickles");
    }

    /** Everything until the server closes the connection (the socket's read timeout is the hang guard). */
    private static String readAll(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        byte[] buf = new byte[4096];
        try {
            for (int n; (n = in.read(buf)) >= 0; ) {
                sb.append(new String(buf, 0, n, StandardCharsets.UTF_8));
            }
        } catch (SocketException e) {
            // reset after the close
        }
        return sb.toString();
    }
}
