package dev.tandem.bridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input on the SockJS bridge, as raw WebSocket messages to /eventbus/websocket: each is answered
 * with an error (an {@code err} frame, or a failed reply when the frame waited for one), or — a message
 * over the size limit — closes that socket; the same socket (when open) and a bystander serve on.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SockJsBadInputTest {
    /** http.max-body-bytes, which bounds a WebSocket message; the smallest the server allows. */
    private static final int MAX_MESSAGE = 65536;

    private TandemNode node;
    private int port;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        config = config.withHttp(TestSettings.withMaxBodyBytes(config.http(), MAX_MESSAGE));
        node = TestNodes.startEmbedded(config, 1, 1);
        port = node.router().httpPort();
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    /** A message that must be refused: how to send it, and the refusal expected. */
    record Bad(String name, Sender send, String errBody, int failureCode, String mentions) {
        static Bad err(String name, Sender send, String errBody) {
            return new Bad(name, send, errBody, 0, null);
        }

        static Bad failed(String name, Sender send, int status, String mentions) {
            return new Bad(name, send, null, status, mentions);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    @FunctionalInterface
    interface Sender {
        /** Sends the bad message and returns the refusal. */
        JsonObject send(SockJsTestClient c) throws Exception;
    }

    private static Sender text(String message) {
        return c -> {
            c.sendText(message);
            return c.awaitErr();
        };
    }

    private static Sender frame(JsonObject frame) {
        return text(frame.encode());
    }

    static Stream<Bad> badInput() {
        JsonObject prompt = new JsonObject().put("prompt", "x");
        return Stream.of(
                Bad.err("not JSON", text("{nope"), "invalid_json"),
                Bad.err("a JSON array", text("[1, 2]"), "invalid_json"),
                Bad.err("a JSON string", text("\"hello\""), "invalid_json"),
                Bad.err("an empty message", text(""), "invalid_json"),
                Bad.err(
                        "not UTF-8, binary",
                        c -> {
                            c.sendBinary(new byte[] {'{', (byte) 0xC3, (byte) 0x28, '}'});
                            return c.awaitErr();
                        },
                        "invalid_json"),
                Bad.err("missing type", frame(new JsonObject().put("address", Addresses.GENERATE)), "missing_type"),
                Bad.err(
                        "unknown type",
                        frame(new JsonObject().put("type", "pause").put("address", Addresses.GENERATE)),
                        "invalid_type"),
                Bad.err(
                        "a type that is not a string",
                        frame(new JsonObject().put("type", 7).put("address", Addresses.GENERATE)),
                        "invalid_type"),
                Bad.err(
                        "missing address",
                        frame(new JsonObject().put("type", "send").put("body", prompt)),
                        "missing_address"),
                // Vert.x reads it as the string "5": no such address may be reached.
                Bad.err(
                        "an address that is not a string",
                        frame(new JsonObject()
                                .put("type", "send")
                                .put("address", 5)
                                .put("body", prompt)),
                        "access_denied"),
                Bad.err(
                        "a reply address that is not a string",
                        frame(new JsonObject()
                                .put("type", "send")
                                .put("address", Addresses.GENERATE)
                                .put("replyAddress", 12)
                                .put("body", prompt)),
                        "invalid_reply_address"),
                Bad.err(
                        "a reply address over 36 characters",
                        frame(new JsonObject()
                                .put("type", "send")
                                .put("address", Addresses.GENERATE)
                                .put("replyAddress", "r".repeat(37))
                                .put("body", prompt)),
                        "invalid_reply_address"),
                Bad.failed(
                        "a body that is not an object",
                        c -> c.request(Addresses.GENERATE, "hello"),
                        400,
                        "JSON object"),
                Bad.failed("no body", c -> c.request(Addresses.GENERATE, null), 400, "JSON object"),
                Bad.failed("no stream_to", c -> c.request(Addresses.GENERATE, prompt), 400, "stream_to"),
                Bad.failed(
                        "stream_to not registered",
                        c -> c.request(Addresses.GENERATE, prompt.copy().put("stream_to", "tandem.client.elsewhere")),
                        400,
                        "not registered"),
                Bad.failed(
                        "stream_to outside tandem.client.",
                        c -> c.request(
                                Addresses.GENERATE, prompt.copy().put("stream_to", Addresses.prefill("prefill-1"))),
                        400,
                        "stream_to"),
                Bad.failed(
                        "no prompt",
                        c -> c.request(Addresses.GENERATE, new JsonObject().put("stream_to", c.address)),
                        400,
                        "prompt"),
                Bad.failed(
                        "a bad temperature",
                        c -> c.request(
                                Addresses.GENERATE,
                                prompt.copy().put("temperature", 5).put("stream_to", c.address)),
                        400,
                        "temperature"),
                Bad.failed(
                        "a wrongly typed max_tokens",
                        c -> c.request(
                                Addresses.GENERATE,
                                prompt.copy().put("max_tokens", "many").put("stream_to", c.address)),
                        400,
                        "max_tokens"),
                Bad.failed(
                        "an unknown model",
                        c -> c.request(
                                Addresses.GENERATE,
                                prompt.copy().put("model", "gpt-9").put("stream_to", c.address)),
                        404,
                        "gpt-9"),
                Bad.failed("a cancel without an id", c -> c.request(Addresses.CANCEL, new JsonObject()), 400, "id"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badInput")
    void badInputIsAnsweredAndEveryoneServesOn(Bad bad) throws Exception {
        try (SockJsTestClient c = SockJsTestClient.connect(port);
                SockJsTestClient bystander = SockJsTestClient.connect(port)) {
            c.registerOwnAddress();
            bystander.registerOwnAddress();
            JsonObject refusal = bad.send().send(c);
            assertEquals("err", refusal.getString("type"), refusal.encode());
            if (bad.errBody() != null) {
                assertEquals(bad.errBody(), refusal.getString("body"), refusal.encode());
            } else {
                assertEquals(bad.failureCode(), refusal.getInteger("failureCode"), refusal.encode());
                assertTrue(refusal.getString("message").contains(bad.mentions()), refusal.encode());
            }
            for (SockJsTestClient client : List.of(c, bystander)) {
                String id = client.generate(
                        new JsonObject().put("prompt", "still here").put("max_tokens", 3));
                assertEquals("length", client.collect(id).last().getString("finish_reason"));
            }
            assertFalse(c.closed.isDone(), "the socket stays open");
        }
    }

    @Test
    void aMessageOverTheLimitClosesThatSocketOnly() throws Exception {
        try (SockJsTestClient c = SockJsTestClient.connect(port);
                SockJsTestClient bystander = SockJsTestClient.connect(port)) {
            c.registerOwnAddress();
            bystander.registerOwnAddress();
            String big = new JsonObject()
                    .put("type", "send")
                    .put("address", Addresses.GENERATE)
                    .put(
                            "body",
                            new JsonObject()
                                    .put("prompt", "x".repeat(MAX_MESSAGE))
                                    .put("stream_to", c.address))
                    .encode();
            assertTrue(big.getBytes(StandardCharsets.UTF_8).length > MAX_MESSAGE);
            try {
                c.sendText(big);
            } catch (AssertionError e) {
                // The server may close while the message is still being written.
            }
            assertTrue(c.awaitClosed(), "the server closed the socket");
            TestNodes.awaitTrue(
                    () -> node.router().clientBridge().sockJsSockets() == 1,
                    Duration.ofSeconds(5),
                    "the closed socket to be forgotten");
            String id =
                    bystander.generate(new JsonObject().put("prompt", "fine").put("max_tokens", 2));
            assertEquals("length", bystander.collect(id).last().getString("finish_reason"));
        }
    }

    @Test
    void anXhrSendOverTheLimitIsRefused() throws Exception {
        // The XHR transports carry frames in POST bodies, read by a bounded body handler.
        // The server answers 413 once the limit is passed and closes: a client still writing the rest of
        // the body may see that close before the answer, so a reset is tried again (a few times at most).
        var http = new dev.tandem.HttpTestClient(port);
        java.net.http.HttpResponse<String> r = null;
        for (int attempt = 0; r == null; attempt++) {
            try {
                r = http.send(http.request("/eventbus/000/xhrsession/xhr_send")
                        .header("Content-Type", "text/plain")
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                                "[\"" + "x".repeat(MAX_MESSAGE + 1) + "\"]"))
                        .build());
            } catch (AssertionError reset) {
                if (attempt >= 4) {
                    throw reset;
                }
            }
        }
        assertEquals(413, r.statusCode(), r.body());
    }
}
