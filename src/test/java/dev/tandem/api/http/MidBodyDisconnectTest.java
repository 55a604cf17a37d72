package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.tandem.HttpTestClient;
import dev.tandem.LogCapture;
import dev.tandem.TestNodes;
import dev.tandem.node.TandemNode;
import java.io.IOException;
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
 * A client that goes away in the middle of a request body is an everyday event, not a server fault: it is
 * logged as a WARNING naming the peer, never as a SEVERE with a stack, and the server goes on serving.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MidBodyDisconnectTest {
    private TandemNode node;
    private int port;

    @BeforeAll
    void start() {
        node = TestNodes.startEmbedded(TestNodes.config(), 1, 1);
        port = node.router().httpPort();
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    /** Sends a head announcing 1000 body bytes and part of the body, then closes; returns the client's port. */
    private int sendHalfABodyAndClose(String path, boolean reset) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            if (reset) {
                socket.setSoLinger(true, 0);
            }
            socket.getOutputStream()
                    .write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                    + "Content-Length: 1000\r\n\r\n{\"prompt\": \"half")
                            .getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            return socket.getLocalPort();
        }
    }

    private void assertWarnedNotSevere(String path, boolean reset) throws Exception {
        try (LogCapture logs = new LogCapture(Level.WARNING)) {
            int clientPort = sendHalfABodyAndClose(path, reset);
            String peer = "127.0.0.1:" + clientPort;
            TestNodes.awaitTrue(() -> !logs.containing(Level.WARNING, peer).isEmpty(), "a WARNING naming " + peer);
            // Anything SEVERE would have been logged by now, with the WARNING of the same close.
            Thread.sleep(500);
            assertEquals(List.of(), logs.atLeast(Level.SEVERE));
            assertEquals(
                    1,
                    logs.containing(Level.WARNING, peer).size(),
                    logs.atLeast(Level.WARNING).toString());
        }
        assertFalse(new HttpTestClient(port)
                .post("/v1/completions", "{\"prompt\": \"still here\", \"max_tokens\": 1}")
                .body()
                .isEmpty());
    }

    @Test
    void aClientClosingInTheMiddleOfACompletionBodyIsAWarningNamingIt() throws Exception {
        assertWarnedNotSevere("/v1/completions", false);
    }

    @Test
    void aClientResettingInTheMiddleOfABodyIsAWarningNamingIt() throws Exception {
        assertWarnedNotSevere("/v1/chat/completions", true);
    }

    @Test
    void aClientClosingInTheMiddleOfABodyNoRouteReadsIsAWarningToo() throws Exception {
        assertWarnedNotSevere("/no/such/route", false);
    }
}
