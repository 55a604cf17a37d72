package dev.tandem.bridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.config.BridgeSettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.node.TandemNode;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Pages of other web sites may not drive the SockJS bridge; the router's own pages and listed origins may. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SockJsOriginTest {
    private static final String LISTED = "https://console.example.com";
    private TandemNode node;
    private int port;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        var b = config.bridge();
        config = config.withBridge(new BridgeSettings(b.host(), b.tcpPort(), b.maxFrameBytes(), true, List.of(LISTED)));
        node = TandemNode.start(config, TandemNode.Plan.embedded(1, 1));
        port = node.router().httpPort();
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    static Stream<Arguments> origins() {
        return Stream.of(
                Arguments.of("no Origin (not a browser)", null, 200, null),
                Arguments.of("the router's own page", "http://127.0.0.1:{port}", 200, null),
                Arguments.of("a listed origin", LISTED, 200, null),
                Arguments.of("a listed origin, other case and a slash", "HTTPS://Console.Example.com/", 200, null),
                Arguments.of("another web site", "https://evil.example", 403, null),
                Arguments.of("the same host on another port", "http://127.0.0.1:1", 403, null),
                Arguments.of("a file page", "null", 403, null),
                Arguments.of(
                        "DNS rebinding: a web site's name pointed at 127.0.0.1",
                        "http://rebind.example:{port}",
                        403,
                        "rebind.example:{port}"),
                Arguments.of(
                        "the router's own page under localhost", "http://localhost:{port}", 200, "localhost:{port}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("origins")
    void onlyTheRoutersOwnAndListedOriginsMayConnect(String name, String origin, int status, String host)
            throws Exception {
        String p = Integer.toString(port);
        // A raw request: the Host header is what a browser sends for the name in its address bar.
        StringBuilder request = new StringBuilder("GET /eventbus/info HTTP/1.1\r\nHost: ")
                .append(host == null ? "127.0.0.1:" + p : host.replace("{port}", p))
                .append("\r\nConnection: close\r\n");
        if (origin != null) {
            request.append("Origin: ").append(origin.replace("{port}", p)).append("\r\n");
        }
        Raw r = Raw.send(port, request.append("\r\n").toString());
        assertEquals(status, r.status(), r.text());
        if (status == 403) {
            assertTrue(r.text().contains("origin_not_allowed"), r.text());
        }
    }

    /** A status line and the whole response, from a request written byte for byte. */
    private record Raw(int status, String text) {
        static Raw send(int port, String request) throws java.io.IOException {
            try (java.net.Socket s = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
                s.setSoTimeout(10_000);
                s.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                String text = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                return new Raw(Integer.parseInt(text.substring(9, 12)), text);
            }
        }
    }
}
