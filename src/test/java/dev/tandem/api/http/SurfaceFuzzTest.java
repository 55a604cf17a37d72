package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.RawHttp;
import dev.tandem.TestNodes;
import dev.tandem.api.EmbeddedServingTest;
import dev.tandem.bridge.BridgeTestClient;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.WorkerLoad;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Seeded fuzzing of the three surfaces a hostile client reaches (issue 17): raw HTTP requests with mutated
 * request lines, headers and framing; WebSocket messages and frames; TCP bridge frames. Asserts no 5xx, every
 * error a JSON body (an OpenAI error, a WebSocket error frame or close code, a bridge {@code err} frame), no
 * request or KV left behind, and every surface serving afterwards. {@link dev.tandem.api.RequestFuzzTest}
 * fuzzes the JSON bodies of the HTTP endpoints.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SurfaceFuzzTest {
    private static final long SEED = 17_2026_12_03L;
    static final int CASES_PER_SURFACE = 1000;
    private static final int MAX_FRAME = 8192;
    /** WebSocket closes a hostile frame may earn: protocol error, bad UTF-8, policy, too big. */
    private static final Set<Integer> CLOSE_CODES = Set.of(1002, 1007, 1008, 1009);

    private TandemNode node;
    private int httpPort;
    private int bridgePort;
    private final Map<String, Integer> outcomes = new TreeMap<>();

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        config = config.withHttp(TestSettings.withMaxBodyBytes(config.http(), 16_384))
                .withBridge(TestSettings.withMaxFrameBytes(config.bridge().withTcpPort(0), MAX_FRAME));
        node = TestNodes.startEmbedded(secured(config), 1, 1);
        httpPort = node.router().httpPort();
        bridgePort = node.router().bridge().tcpPort();
    }

    /** The listeners as fuzzed: clear text here, TLS in {@link TlsSurfaceFuzzTest}. */
    TandemConfig secured(TandemConfig config) {
        return config;
    }

    /** Cases per surface. */
    int cases() {
        return CASES_PER_SURFACE;
    }

    /** A client of the API port, speaking what it speaks. */
    HttpTestClient apiClient(int port) {
        return new HttpTestClient(port);
    }

    @AfterAll
    void stop() {
        System.out.println(getClass().getSimpleName() + " outcomes: " + outcomes);
        if (node != null) {
            node.close().await();
        }
    }

    // ---- what gets sent ----

    private static final Object[] VALUES = {
        null,
        true,
        0,
        -1,
        1,
        3,
        1e308,
        -1.5e19,
        0.5,
        Long.MAX_VALUE,
        "",
        "x",
        "\u0000",
        "ü→漢",
        new JsonArray(),
        new JsonArray().add(1),
        new JsonObject(),
        "y".repeat(300)
    };
    private static final String[] FIELDS = {
        "prompt",
        "messages",
        "max_tokens",
        "temperature",
        "top_k",
        "seed",
        "stream",
        "stop",
        "model",
        "id",
        "type",
        "stream_to",
        "user",
        "n"
    };

    private static JsonObject body(Random rnd) {
        JsonObject b = new JsonObject().put("max_tokens", 1 + rnd.nextInt(3));
        if (rnd.nextBoolean()) {
            b.put("prompt", "fuzz " + rnd.nextInt(1000));
        } else {
            b.put(
                    "messages",
                    new JsonArray().add(new JsonObject().put("role", "user").put("content", "f")));
        }
        for (int i = rnd.nextInt(3); i > 0; i--) {
            b.put(FIELDS[rnd.nextInt(FIELDS.length)], VALUES[rnd.nextInt(VALUES.length)]);
        }
        return b;
    }

    /** Text with a few bytes replaced by anything (invalid UTF-8 included). */
    private static byte[] garble(Random rnd, byte[] bytes) {
        byte[] out = bytes.clone();
        for (int i = rnd.nextInt(3); i >= 0 && out.length > 0; i--) {
            out[rnd.nextInt(out.length)] = (byte) rnd.nextInt(256);
        }
        return out;
    }

    private void count(String outcome) {
        outcomes.merge(outcome, 1, Integer::sum);
    }

    // ---- HTTP ----

    private static final String[] METHODS = {"POST", "GET", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH", "BREW"};
    private static final String[] PATHS = {
        "/v1/completions",
        "/v1/chat/completions",
        "/v1/models",
        "/v1/models/x",
        "/admin/workers",
        "/v1/stream",
        "/metrics",
        "/health",
        "/ready",
        "/v1/sessions/s",
        "/nothing",
        "/v1/completions?x=%zz",
        "/%",
        "//..//"
    };
    private static final String[] HEADERS = {
        "Content-Type: application/json",
        "Content-Type: application/json; charset=utf-16",
        "Content-Type: text/plain",
        "Content-Encoding: gzip",
        "Transfer-Encoding: gzip, chunked",
        "Expect: 100-continue",
        "Connection: upgrade",
        "Upgrade: h2c",
        "Authorization: Bearer x",
        "X-Session-Id: " + "s".repeat(300),
        "Content-Length: 5",
        "Host:",
        "Accept: */*"
    };

    private byte[] httpRequest(Random rnd) {
        String method = METHODS[rnd.nextInt(METHODS.length)];
        String path = PATHS[rnd.nextInt(PATHS.length)];
        byte[] body = body(rnd).encode().getBytes(StandardCharsets.UTF_8);
        if (rnd.nextInt(4) == 0) {
            body = garble(rnd, body);
        }
        ByteArrayOutputStream req = new ByteArrayOutputStream();
        write(
                req,
                method + " " + path + (rnd.nextInt(20) == 0 ? " HTTP/1.0" : " HTTP/1.1") + "\r\nHost: 127.0.0.1\r\n");
        for (int i = rnd.nextInt(3); i > 0; i--) {
            String h = HEADERS[rnd.nextInt(HEADERS.length)];
            if (!h.startsWith("Content-Length") && !h.startsWith("Transfer-Encoding")) {
                write(req, h + "\r\n");
            }
        }
        if (rnd.nextInt(6) == 0) {
            // A header whose value holds a byte that is no header byte (NUL, a control, non-ASCII; never CR/LF).
            byte bad = (byte) rnd.nextInt(256);
            bad = bad == '\r' || bad == '\n' ? 0 : bad;
            write(req, "X-Odd: a");
            req.write(bad);
            write(req, "b\r\n");
        }
        switch (rnd.nextInt(6)) {
            case 0 -> {
                // Chunked, its sizes sometimes not hex; always terminated, so the server never waits for more.
                String size = rnd.nextBoolean() ? Integer.toHexString(body.length) : "zz";
                write(req, "Transfer-Encoding: chunked\r\n\r\n" + size + "\r\n");
                req.write(body, 0, body.length);
                write(req, "\r\n0\r\n\r\n");
            }
            case 1 -> write(req, "Content-Length: " + (rnd.nextBoolean() ? "-1" : "99999999999999999999") + "\r\n\r\n");
            case 2 -> write(req, "\r\n"); // no body
            default -> {
                write(req, "Content-Length: " + body.length + "\r\n\r\n");
                req.write(body, 0, body.length);
            }
        }
        return req.toByteArray();
    }

    private static void write(ByteArrayOutputStream out, String s) {
        byte[] b = s.getBytes(StandardCharsets.ISO_8859_1);
        out.write(b, 0, b.length);
    }

    private void fuzzHttp(Random rnd) throws IOException {
        for (int i = 0; i < cases(); i++) {
            byte[] request = httpRequest(rnd);
            String shown = new String(request, StandardCharsets.ISO_8859_1);
            RawHttp.Response r = RawHttp.exchange(httpPort, request);
            assertTrue(r.status() > 0, "no answer to " + shown);
            assertTrue(r.status() < 500, "5xx to " + shown + "\n" + r.body());
            count("http " + r.status());
            if (r.status() >= 400 && !shown.startsWith("HEAD ")) {
                JsonObject error = new JsonObject(r.body()).getJsonObject("error");
                assertNotNull(error, "not an OpenAI error: " + r.body() + " for " + shown);
                assertNotNull(error.getString("message"), r.body());
            }
        }
    }

    // ---- WebSocket ----

    private void fuzzWebSocket(Random rnd) throws IOException {
        for (int i = 0; i < cases(); i++) {
            try (RawWebSocket ws = RawWebSocket.connect(httpPort, "/v1/stream")) {
                JsonObject message = body(rnd).put("id", rnd.nextInt(4) == 0 ? VALUES[rnd.nextInt(VALUES.length)] : i);
                if (rnd.nextInt(8) == 0) {
                    message.put("type", "cancel");
                }
                byte[] bytes = message.encode().getBytes(StandardCharsets.UTF_8);
                String shown = message.encode();
                switch (rnd.nextInt(8)) {
                    case 0 -> ws.frame(true, 0, RawWebSocket.TEXT, garble(rnd, bytes));
                    case 1 -> ws.frame(true, 1 + rnd.nextInt(7), RawWebSocket.TEXT, bytes);
                    case 2 -> ws.frame(true, 0, rnd.nextBoolean() ? RawWebSocket.BINARY : 3 + rnd.nextInt(5), bytes);
                    case 3 -> {
                        ws.frame(false, 0, RawWebSocket.TEXT, java.util.Arrays.copyOf(bytes, bytes.length / 2));
                        ws.frame(true, 0, 0, java.util.Arrays.copyOfRange(bytes, bytes.length / 2, bytes.length));
                    }
                    case 4 -> ws.frame(true, 0, RawWebSocket.TEXT, new byte[20_000]);
                    default -> ws.frame(true, 0, RawWebSocket.TEXT, bytes);
                }
                // A cancel of an id never used is always answered: everything before it has been handled.
                try {
                    ws.text("{\"id\": \"sentinel\", \"type\": \"cancel\"}");
                } catch (IOException e) {
                    // already closed by the server: the close frame tells why
                }
                readWebSocketUntilSentinel(ws, shown);
            }
        }
    }

    private void readWebSocketUntilSentinel(RawWebSocket ws, String shown) throws IOException {
        while (true) {
            RawWebSocket.Frame f = ws.read();
            assertNotNull(f, "the connection dropped without a close frame after " + shown);
            if (f.opcode() == RawWebSocket.CLOSE) {
                assertTrue(CLOSE_CODES.contains(f.code()), "close " + f.code() + " " + f.reason() + " after " + shown);
                count("ws close " + f.code());
                return;
            }
            JsonObject frame = new JsonObject(f.text());
            if ("error".equals(frame.getString("type"))) {
                int status = frame.getInteger("status");
                assertTrue(status < 500, "5xx frame " + frame.encode() + " after " + shown);
                assertNotNull(frame.getJsonObject("error").getString("message"), frame.encode());
                if ("sentinel".equals(frame.getValue("id"))) {
                    return;
                }
                count("ws error " + status);
            } else {
                count("ws " + frame.getString("type"));
            }
        }
    }

    // ---- TCP bridge ----

    private void fuzzBridge(Random rnd) throws Exception {
        for (int i = 0; i < cases(); i++) {
            try (BridgeTestClient c = BridgeTestClient.connect(bridgePort)) {
                if (rnd.nextBoolean()) {
                    c.registerOwnAddress();
                }
                JsonObject b = body(rnd).put("stream_to", rnd.nextInt(4) == 0 ? "tandem.client.x" : c.address);
                String[] addresses = {Addresses.GENERATE, Addresses.CANCEL, c.address, "tandem.prefill.prefill-1", ""};
                String[] types = {"send", "publish", "register", "unregister", "ping", "bogus"};
                JsonObject frame = new JsonObject()
                        .put("type", rnd.nextInt(4) == 0 ? types[rnd.nextInt(types.length)] : "send")
                        .put(
                                "address",
                                rnd.nextInt(4) == 0 ? addresses[rnd.nextInt(addresses.length)] : Addresses.GENERATE)
                        .put("replyAddress", rnd.nextInt(6) == 0 ? VALUES[rnd.nextInt(VALUES.length)] : "r" + i)
                        .put("body", rnd.nextInt(8) == 0 ? VALUES[rnd.nextInt(VALUES.length)] : b);
                byte[] payload = frame.encode().getBytes(StandardCharsets.UTF_8);
                boolean closes = false;
                switch (rnd.nextInt(8)) {
                    case 0 -> c.writeFrame(garble(rnd, payload));
                    case 1 -> c.writeFrame(new byte[MAX_FRAME + 1 + rnd.nextInt(100)]);
                    case 2 -> {
                        c.writeRaw(new byte[] {(byte) 0x80, 0, 0, (byte) rnd.nextInt(256)}); // a negative length
                        closes = true;
                    }
                    case 3 -> c.writeFrame("\"not an object\"".getBytes(StandardCharsets.UTF_8));
                    default -> c.writeFrame(payload);
                }
                if (!closes) {
                    c.write(new JsonObject().put("type", "ping"));
                }
                readBridgeUntilPong(c, closes, frame.encode());
            }
        }
    }

    private void readBridgeUntilPong(BridgeTestClient c, boolean closes, String shown) {
        while (true) {
            JsonObject f = c.await(x -> true, "a frame after " + shown);
            String type = f.getString("type");
            if ("pong".equals(type)) {
                count("bridge pong");
                return;
            }
            if ("err".equals(type)) {
                Integer failure = f.getInteger("failureCode");
                assertTrue(failure == null || failure < 500, "5xx err " + f.encode() + " after " + shown);
                assertNotNull(f.getString("message"), f.encode());
                count("bridge err " + (failure == null ? f.getString("message") : failure));
                if (closes && "invalid_frame_length".equals(f.getString("message"))) {
                    return;
                }
            } else {
                assertEquals("message", type, f.encode());
                Object status = f.getJsonObject("body") == null
                        ? null
                        : f.getJsonObject("body").getValue("status");
                assertTrue(!(status instanceof Integer s) || s < 500, "5xx push " + f.encode() + " after " + shown);
                count("bridge message");
            }
        }
    }

    // ---- the run ----

    @Test
    void threeThousandHostileCasesLeaveEverySurfaceServing() throws Exception {
        Random rnd = new Random(SEED);
        long started = System.nanoTime();
        fuzzHttp(rnd);
        fuzzWebSocket(rnd);
        fuzzBridge(rnd);
        System.out.println(getClass().getSimpleName() + ": " + 3 * cases() + " cases, seed " + SEED + ", "
                + Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms");
        TestNodes.awaitTrue(
                () -> node.router().requests().activeRequests() == 0
                        && node.router().bridge().requests() == 0
                        && idle("prefill-1")
                        && idle("decode-1"),
                Duration.ofSeconds(5),
                "no request and no KV left behind");
        // Still serving, on every surface.
        HttpTestClient http = apiClient(httpPort);
        assertEquals(
                200,
                http.post("/v1/completions", "{\"prompt\": \"after\", \"max_tokens\": 2}")
                        .statusCode());
        try (RawWebSocket ws = RawWebSocket.connect(httpPort, "/v1/stream")) {
            ws.text("{\"id\": \"ok\", \"prompt\": \"after\", \"max_tokens\": 2}");
            String last;
            do {
                last = new JsonObject(ws.read().text()).getString("type");
            } while (!"done".equals(last) && !"error".equals(last));
            assertEquals("done", last);
        }
        try (BridgeTestClient c = BridgeTestClient.connect(bridgePort)) {
            c.registerOwnAddress();
            JsonObject reply = c.request(
                    Addresses.GENERATE,
                    new JsonObject().put("prompt", "after").put("max_tokens", 2).put("stream_to", c.address));
            assertEquals("message", reply.getString("type"), reply.encode());
        }
    }

    private boolean idle(String worker) {
        WorkerLoad s = EmbeddedServingTest.status(node, worker);
        return s.prefilling() + s.activeSequences() + s.parkedKv() + s.incomingKv() == 0 && s.kvBytesUsed() == 0;
    }

    static List<Object> values() {
        return List.of(VALUES);
    }
}
