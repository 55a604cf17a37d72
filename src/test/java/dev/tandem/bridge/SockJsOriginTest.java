package dev.tandem.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TandemNode;
import dev.tandem.TestNodes;
import dev.tandem.config.BridgeSettings;
import dev.tandem.config.TandemConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
  private final HttpClient client = HttpClient.newHttpClient();
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
        Arguments.of("no Origin (not a browser)", null, 200),
        Arguments.of("the router's own page", "http://127.0.0.1:{port}", 200),
        Arguments.of("a listed origin", LISTED, 200),
        Arguments.of("a listed origin, other case and a slash", "HTTPS://Console.Example.com/", 200),
        Arguments.of("another web site", "https://evil.example", 403),
        Arguments.of("the same host on another port", "http://127.0.0.1:1", 403),
        Arguments.of("a file page", "null", 403));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("origins")
  void onlyTheRoutersOwnAndListedOriginsMayConnect(String name, String origin, int status) throws Exception {
    HttpRequest.Builder info = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/eventbus/info"));
    if (origin != null) {
      info.header("Origin", origin.replace("{port}", Integer.toString(port)));
    }
    HttpResponse<String> r = client.send(info.build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(status, r.statusCode(), r.body());
    if (status == 403) {
      assertTrue(r.body().contains("origin_not_allowed"), r.body());
    }
  }

}
