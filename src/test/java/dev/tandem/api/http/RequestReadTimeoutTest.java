package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.LogCapture;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The request-read timer on a bare server whose handler answers before reading the body and keeps the
 * connection: when the body never ends, the timer closes the connection without trying to answer again.
 */
class RequestReadTimeoutTest {
    private static final long READ_MS = 300;

    private Vertx vertx;
    private HttpServer server;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        RequestReadTimeout timeout = new RequestReadTimeout(vertx, READ_MS);
        server = vertx.createHttpServer()
                .connectionHandler(timeout::onConnection)
                .requestHandler(timeout.wrap(request -> request.response().end("early")))
                .listen(0, "127.0.0.1")
                .await();
    }

    @AfterEach
    void stop() {
        vertx.close().await();
    }

    @Test
    void aResponseAlreadySentIsNotAnsweredAgainWhenTheBodyNeverEnds() throws Exception {
        try (LogCapture logs = new LogCapture(Level.WARNING);
                Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.actualPort())) {
            socket.setSoTimeout(5_000);
            socket.getOutputStream()
                    .write("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nsome of it"
                            .getBytes(StandardCharsets.US_ASCII));
            String all = ClosingConnections.readUntilClosed(socket.getInputStream());
            assertTrue(all.startsWith("HTTP/1.1 200"), all);
            assertTrue(all.endsWith("\r\n\r\nearly"), "one answer only: " + all);
            assertEquals(List.of(), logs.atLeast(Level.SEVERE));
            assertEquals(
                    1,
                    logs.containing(Level.WARNING, "http.request-read-timeout-ms")
                            .size(),
                    all);
        }
    }
}
