package dev.tandem.bridge.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.bridge.BridgeTestClient;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.config.WorkerBridgeSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Guessing the worker bridge's token, over real sockets against a router node with the bridge on and
 * its default limits — a connection gets three tries, a source address ten within its window — but a
 * window of {@value #WINDOW_MS} ms instead of a minute, so a test can see it close. The node's per-address
 * state lives as long as the class, so each test speaks from loopback addresses of its own (127.0.x.y:
 * every one of them reaches 127.0.0.1 on Linux, and the bridge sees it as the peer).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WorkerBridgeFailedJoinsTest {
    static final long WINDOW_MS = 3_000;
    private final Engine engine = ReferenceEngine.builtin(16);
    private final List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                warnings.add(r);
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };
    private final Logger bridgeLog = Logger.getLogger("dev.tandem.bridge.worker");
    private TandemNode node;
    private HttpTestClient http;
    private int port;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        WorkerBridgeSettings bridge =
                TestSettings.withToken(config.workerBridge().withTcpPort(0), FakeExternalWorker.TOKEN);
        config = config.withWorkerBridge(
                TestSettings.withFailedJoins(bridge, new WorkerBridgeSettings.FailedJoins(3, 10, WINDOW_MS)));
        node = TandemNode.start(config, new TandemNode.Plan(true, List.of(), List.of()), engine);
        port = node.workerBridge().port();
        http = new HttpTestClient(node.router().httpPort());
        bridgeLog.addHandler(capture);
    }

    @AfterAll
    void stop() {
        bridgeLog.removeHandler(capture);
        if (node != null) {
            node.close().await();
        }
    }

    @Test
    void aConnectionIsClosedAtItsThirdWrongToken() throws Exception {
        try (BridgeTestClient c = BridgeTestClient.connectFrom("127.0.0.2", port)) {
            for (int i = 1; i <= 3; i++) {
                JsonObject refused = c.request(Addresses.WORKER_JOIN, join("py-guess", "wrong-token-" + i));
                assertEquals("err", refused.getString("type"), refused.encode());
                assertEquals("unauthorized", refused.getString("message"), refused.encode());
            }
            assertClosedAtOnce(c, "after its third failed join");
        }
    }

    /** Closed by the bridge now, not by the idle sweep a few seconds later (which would send idle_timeout). */
    private static void assertClosedAtOnce(BridgeTestClient c, String when) throws InterruptedException {
        long started = System.nanoTime();
        assertTrue(c.awaitClosed(), "the connection should be closed " + when);
        long ms = (System.nanoTime() - started) / 1_000_000;
        assertEquals(null, c.firstUnread(f -> "idle_timeout".equals(f.getString("message"))), "closed " + when);
        assertTrue(ms < 1_500, "closed " + ms + " ms later: the connection should be closed at once " + when);
    }

    @Test
    void theRightTokenAfterFewerFailuresJoins() throws Exception {
        try (BridgeTestClient c = BridgeTestClient.connectFrom("127.0.0.3", port)) {
            for (int i = 1; i <= 2; i++) {
                assertEquals(
                        "unauthorized",
                        c.request(Addresses.WORKER_JOIN, join("py-typo", "typo-" + i))
                                .getString("message"));
            }
            JsonObject welcome = c.request(Addresses.WORKER_JOIN, join("py-typo", FakeExternalWorker.TOKEN));
            assertEquals("message", welcome.getString("type"), welcome.encode());
        }
    }

    @Test
    void anAddressWithTenFailuresIsRefusedUnheardUntilItsWindowClosesWhileAnotherJoins() throws Exception {
        fail("127.0.0.4", 10);
        long retryAfter;
        try (BridgeTestClient c = BridgeTestClient.connectFrom("127.0.0.4", port)) {
            // The right token, unheard: nothing from this address is checked until its window closes.
            JsonObject refused = c.request(Addresses.WORKER_JOIN, join("py-locked", FakeExternalWorker.TOKEN));
            assertEquals("err", refused.getString("type"), refused.encode());
            assertEquals("too_many_failed_joins", refused.getString("message"), refused.encode());
            retryAfter = refused.getLong("retry_after_ms", -1L);
            assertTrue(retryAfter > 0 && retryAfter <= WINDOW_MS, refused.encode());
            assertClosedAtOnce(c, "when its address is refused");
        }
        try (BridgeTestClient c = BridgeTestClient.connectFrom("127.0.0.5", port)) {
            JsonObject welcome = c.request(Addresses.WORKER_JOIN, join("py-neighbour", FakeExternalWorker.TOKEN));
            assertEquals("message", welcome.getString("type"), "another address is not affected: " + welcome.encode());
        }
        String metrics = metrics();
        assertTrue(
                metrics.matches("(?s).*tandem_worker_bridge_failed_joins_total\\{reason=\"rate_limited\",?\\} [1-9].*"),
                metrics);
        Thread.sleep(retryAfter + 50);
        try (BridgeTestClient c = BridgeTestClient.connectFrom("127.0.0.4", port)) {
            JsonObject welcome = c.request(Addresses.WORKER_JOIN, join("py-locked", FakeExternalWorker.TOKEN));
            assertEquals(
                    "message", welcome.getString("type"), "heard again once the window closed: " + welcome.encode());
        }
    }

    @Test
    void aFloodOfAddressesLogsAFewLines() throws Exception {
        for (int i = 1; i <= 2 * JoinGuard.LOG_LINES_PER_MINUTE; i++) {
            try (BridgeTestClient c = BridgeTestClient.connectFrom("127.0.1." + i, port)) {
                assertEquals(
                        "unauthorized",
                        c.request(Addresses.WORKER_JOIN, join("py-flood", "flood-" + i))
                                .getString("message"));
            }
        }
        // Every test of the class fits in one minute of the throttle: at most its lines in all.
        long lines = warnings.stream()
                .filter(r -> r.getLoggerName().equals(JoinGuard.class.getName()))
                .count();
        assertTrue(lines <= JoinGuard.LOG_LINES_PER_MINUTE, lines + " lines");
    }

    @Test
    void failedJoinsAreCountedByReasonAndLoggedWithThePeer() throws Exception {
        try (BridgeTestClient c = BridgeTestClient.connectFrom("127.0.0.6", port)) {
            JsonObject noToken = join("py-anon", null);
            assertEquals(
                    "unauthorized", c.request(Addresses.WORKER_JOIN, noToken).getString("message"));
            assertEquals(
                    "unauthorized",
                    c.request(Addresses.WORKER_JOIN, join("py-anon", "not-the-token"))
                            .getString("message"));
        }
        String metrics = metrics();
        assertTrue(
                metrics.matches(
                        "(?s).*tandem_worker_bridge_failed_joins_total\\{reason=\"missing_token\",?\\} [1-9].*"),
                metrics);
        assertTrue(
                metrics.matches("(?s).*tandem_worker_bridge_failed_joins_total\\{reason=\"wrong_token\",?\\} [1-9].*"),
                metrics);
        assertTrue(
                warnings.stream().anyMatch(r -> r.getMessage().contains("127.0.0.6")),
                "a WARN naming the peer: "
                        + warnings.stream().map(LogRecord::getMessage).toList());
    }

    /** {@code count} wrong tokens from {@code host}, as many per connection as it may make. */
    private void fail(String host, int count) throws Exception {
        int sent = 0;
        while (sent < count) {
            try (BridgeTestClient c = BridgeTestClient.connectFrom(host, port)) {
                for (int i = 0; i < 3 && sent < count; i++, sent++) {
                    JsonObject refused = c.request(Addresses.WORKER_JOIN, join("py-guess", "guess-" + sent));
                    assertEquals("unauthorized", refused.getString("message"), refused.encode());
                }
            }
        }
    }

    private JsonObject join(String id, String token) {
        JsonObject body = FakeExternalWorker.joinBody("decode", engine, id);
        if (token == null) {
            body.remove("token");
            return body;
        }
        return body.put("token", token);
    }

    private String metrics() {
        return http.send(http.request("/metrics").GET().build()).body();
    }
}
