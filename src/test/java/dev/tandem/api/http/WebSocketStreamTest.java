package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tandem.TestNodes;
import dev.tandem.api.EmbeddedServingTest;
import dev.tandem.api.OpenAiRequestParser;
import dev.tandem.api.http.WebSocketTestClient.Result;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.engine.tokenizer.ChatMessage;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.router.ServedModel;
import dev.tandem.router.TestModels;
import dev.tandem.worker.engine.DecodeWorkerVerticle;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code /v1/stream}: many requests per socket, cancel, close, and bad frames that harm nothing. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WebSocketStreamTest {
    private static final int MAX_BODY = 8192;
    private static final int LONG = 400;
    private final Engine reference = ReferenceEngine.builtin(16);
    private TandemNode node;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        config = config.withHttp(TestSettings.withMaxBodyBytes(config.http(), MAX_BODY));
        // 10 ms a decode step: a 400-token request is still running seconds later.
        node = TandemNode.start(config, TandemNode.Plan.embedded(2, 2), new PacedEngine(reference, 10));
        TestNodes.awaitWorkers(node.router(), 2, 2);
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    @BeforeEach
    void idle() {
        awaitNothingRunning("the previous test's requests to end");
    }

    @Test
    void interleavedRequestsEachGetTheirOwnTokens() throws Exception {
        try (WebSocketTestClient ws = WebSocketTestClient.connect(node.router().httpPort())) {
            ws.send(completion("a", "The router", 40, 0.8, 11).encode());
            ws.send(completion(7, "Streams agree", 30, 1.0, 5).encode());
            List<ChatMessage> chat = List.of(new ChatMessage("user", "hello there"));
            ws.send(new JsonObject()
                    .put("id", "chat")
                    .put(
                            "messages",
                            new JsonArray()
                                    .add(new JsonObject().put("role", "user").put("content", "hello there")))
                    .put("max_tokens", 20)
                    .put("temperature", 0.7)
                    .put("seed", 2)
                    .encode());
            Map<String, Result> results = ws.collect(Set.of("a", "7", "chat"));

            checkMatchesLocal(results.get("a"), reference.tokenizer().encode("The router", true), 40, 0.8, 11);
            checkMatchesLocal(results.get("7"), reference.tokenizer().encode("Streams agree", true), 30, 1.0, 5);
            int[] chatPrompt =
                    reference.tokenizer().encode(node.engine().chatTemplate().render(chat), true);
            checkMatchesLocal(results.get("chat"), chatPrompt, 20, 0.7, 2);
            // Ids come back verbatim: the number stays a number.
            assertEquals(7, results.get("7").frames().get(0).getValue("id"));
            assertTrue(results.get("a").frames().get(0).getString("request_id").matches("-?\\d+"));
        }
    }

    @Test
    void aCancelledRequestStillReportsThePromptTokensItReused() throws Exception {
        String prompt = "A cancelled request reuses this prompt's KV, which an earlier request left in a cache, "
                + "and its final frame says how much of the prompt was reused.";
        int[] tokens = reference.tokenizer().encode(prompt, true);
        int blockSize = TestNodes.config().worker().kvBlockSize();
        assertTrue(tokens.length >= 4 * blockSize, tokens.length + " tokens");
        try (WebSocketTestClient ws = WebSocketTestClient.connect(node.router().httpPort())) {
            ws.send(completion("warm", prompt, 1, 0, 1).encode());
            assertEquals("done", ws.collect(Set.of("warm")).get("warm").last().getString("type"));
            TestNodes.awaitIndexed(node, blockSize, tokens, tokens.length / blockSize);

            ws.send(completion("reused", prompt, 200, 0.9, 3).encode()); // 2 s at 10 ms a step
            ws.awaitTokenFrames("reused", 2);
            ws.send(new JsonObject().put("id", "reused").put("type", "cancel").encode());
            JsonObject done = ws.collect(Set.of("reused")).get("reused").last();
            assertEquals("cancelled", done.getString("finish_reason"), done.encode());
            int cached = done.getJsonObject("usage")
                    .getJsonObject("prompt_tokens_details")
                    .getInteger("cached_tokens");
            assertTrue(cached >= tokens.length - blockSize, "cached " + cached + " of " + tokens.length);
        }
        awaitNothingRunning("the cancelled request to be gone from router and workers");
    }

    @Test
    void cancelEndsTheRequestEverywhereAndFreesItsId() throws Exception {
        try (WebSocketTestClient ws = WebSocketTestClient.connect(node.router().httpPort())) {
            int[] prompt = reference.tokenizer().encode("a long answer", true);
            ws.send(completion("long", "a long answer", LONG, 0.9, 3).encode());
            int received = ws.awaitTokenFrames("long", 3);
            ws.send(new JsonObject().put("id", "long").put("type", "cancel").encode());
            Result r = ws.collect(Set.of("long")).get("long");
            JsonObject done = r.last();
            assertEquals("done", done.getString("type"), done.encode());
            assertEquals("cancelled", done.getString("finish_reason"));
            JsonObject usage = done.getJsonObject("usage");
            assertEquals(
                    received + r.tokenIds().length,
                    usage.getInteger("completion_tokens"),
                    "usage counts exactly the tokens sent");
            assertEquals(prompt.length, usage.getInteger("prompt_tokens"));
            assertTrue(usage.getInteger("completion_tokens") < LONG);
            awaitNothingRunning("the cancelled request to be gone from router and workers");
            assertNull(ws.frames.poll(200, TimeUnit.MILLISECONDS), "nothing is sent after the final frame");
            // The id is free again, and the socket still serves.
            ws.send(completion("long", "again", 4, 0, 1).encode());
            assertEquals("done", ws.collect(Set.of("long")).get("long").last().getString("type"));
        }
    }

    @Test
    void closingTheSocketCancelsEverythingOnIt() throws Exception {
        long stepsBefore = decodeSteps();
        WebSocketTestClient ws = WebSocketTestClient.connect(node.router().httpPort());
        ws.send(completion("x", "first of two", LONG, 0.9, 1).encode());
        ws.send(completion(2, "second of two", LONG, 0.9, 2).encode());
        ws.awaitTokenFrames("x", 2);
        ws.awaitTokenFrames("2", 2);
        ws.socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye").get(5, TimeUnit.SECONDS);
        assertEquals(WebSocket.NORMAL_CLOSURE, ws.closed.get(5, TimeUnit.SECONDS));
        awaitNothingRunning("the closed socket's requests to be cancelled");
        assertTrue(decodeSteps() - stepsBefore < LONG / 2, "decode stopped early");
    }

    @Test
    void aSocketRunsAtMostSixtyFourRequests() throws Exception {
        WebSocketTestClient ws = WebSocketTestClient.connect(node.router().httpPort());
        for (int i = 0; i <= WebSocketSession.MAX_IN_FLIGHT; i++) {
            ws.send(completion(i, "busy " + i, LONG, 0.9, i).encode());
        }
        JsonObject refused = ws.awaitError();
        assertEquals(WebSocketSession.MAX_IN_FLIGHT, refused.getValue("id"));
        assertEquals(429, refused.getInteger("status"));
        assertEquals("too_many_in_flight", refused.getJsonObject("error").getString("code"));
        // A cancel frees a slot.
        ws.send(new JsonObject().put("id", 0).put("type", "cancel").encode());
        ws.send(completion("one more", "fits now", LONG, 0.9, 1).encode());
        ws.awaitTokenFrames("one more", 1);
        // An abrupt drop (no close handshake) cancels all 64.
        ws.socket.abort();
        awaitNothingRunning("the dropped socket's 64 requests to be cancelled");
    }

    @Test
    void aSingleFrameOverTheServersFrameLimitIsClosedWith1009() throws Exception {
        // Raw bytes: the JDK client splits big messages into small frames, a browser does not.
        try (RawWebSocket ws = RawWebSocket.connect(node.router().httpPort(), "/v1/stream")) {
            // A masked text frame header announcing 8 MiB: refused at the header, before any payload.
            ws.announce(8L << 20);
            RawWebSocket.Frame close = ws.awaitClose();
            assertNotNull(close, "a close frame, not a dropped connection");
            assertEquals(1009, close.code(), close.reason());
            assertTrue(close.reason().contains("exceeded"), close.reason());
        }
    }

    @Test
    void aFrameWithRsvBitsAndNoExtensionIsClosedWith1002() throws Exception {
        try (RawWebSocket ws = RawWebSocket.connect(node.router().httpPort(), "/v1/stream")) {
            ws.frame(true, 4, RawWebSocket.TEXT, "{\"id\": 1, \"prompt\": \"hi\"}".getBytes(StandardCharsets.UTF_8));
            RawWebSocket.Frame close = ws.awaitClose();
            assertNotNull(close, "a close frame, not a dropped connection");
            assertEquals(1002, close.code(), close.reason());
        }
        awaitNothingRunning("the refused frame to start nothing");
    }

    @Test
    void invalidUtf8InATextMessageIsClosedWith1007() throws Exception {
        try (RawWebSocket ws = RawWebSocket.connect(node.router().httpPort(), "/v1/stream")) {
            // Split across two frames, so no frame-level check can see it: the message must be checked whole.
            ws.frame(false, 0, RawWebSocket.TEXT, new byte[] {'{', '"', 'i', 'd', '"', ':', '"', (byte) 0xe2});
            ws.frame(true, 0, 0, new byte[] {(byte) 0x28, (byte) 0xa1, '"', '}'});
            RawWebSocket.Frame close = ws.awaitClose();
            assertNotNull(close, "a close frame");
            assertEquals(1007, close.code(), close.reason());
        }
    }

    /** A bad message, the error frame it must get ({@code id}, status, code), and nothing else harmed. */
    record BadFrame(String name, Consumer<WebSocketTestClient> send, Object id, int status, String code) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<BadFrame> badFrames() {
        String big = "x".repeat(MAX_BODY / 2);
        return Stream.of(
                new BadFrame("not JSON", ws -> ws.send("{nope"), null, 400, "invalid_json"),
                new BadFrame("JSON array", ws -> ws.send("[1, 2]"), null, 400, "invalid_json"),
                new BadFrame("JSON string", ws -> ws.send("\"hi\""), null, 400, "invalid_json"),
                new BadFrame("missing id", ws -> ws.send("{\"prompt\": \"x\"}"), null, 400, "invalid_value"),
                new BadFrame("null id", ws -> ws.send("{\"id\": null, \"prompt\": \"x\"}"), null, 400, "invalid_value"),
                new BadFrame(
                        "boolean id", ws -> ws.send("{\"id\": true, \"prompt\": \"x\"}"), null, 400, "invalid_type"),
                new BadFrame("object id", ws -> ws.send("{\"id\": {}, \"prompt\": \"x\"}"), null, 400, "invalid_type"),
                new BadFrame("empty id", ws -> ws.send("{\"id\": \"\", \"prompt\": \"x\"}"), null, 400, "invalid_type"),
                // Was dropped with a SEVERE NumberFormatException: Infinity has no key.
                new BadFrame(
                        "id 1e400", ws -> ws.send("{\"id\": 1e400, \"prompt\": \"hi\"}"), null, 400, "invalid_type"),
                new BadFrame(
                        "id with a huge exponent",
                        ws -> ws.send("{\"id\": 1e999999999, \"prompt\": \"hi\"}"),
                        null,
                        400,
                        "invalid_type"),
                new BadFrame(
                        "cancel of an unknown id",
                        ws -> ws.send("{\"id\": \"ghost\", \"type\": \"cancel\"}"),
                        "ghost",
                        404,
                        "unknown_id"),
                new BadFrame(
                        "both prompt and messages",
                        ws -> ws.send("{\"id\": \"pm\", \"prompt\": \"hi\", \"messages\": "
                                + "[{\"role\": \"user\", \"content\": \"hi\"}]}"),
                        "pm",
                        400,
                        "invalid_value"),
                new BadFrame(
                        "unknown type",
                        ws -> ws.send("{\"id\": \"t\", \"type\": \"pause\"}"),
                        "t",
                        400,
                        "invalid_value"),
                new BadFrame(
                        "bad temperature",
                        ws -> ws.send("{\"id\": \"f\", \"prompt\": \"x\", \"temperature\": 5}"),
                        "f",
                        400,
                        "invalid_value"),
                new BadFrame("no prompt", ws -> ws.send("{\"id\": 3}"), 3, 400, "invalid_value"),
                new BadFrame(
                        "unknown model",
                        ws -> ws.send("{\"id\": 9, \"prompt\": \"x\", \"model\": \"gpt-9\"}"),
                        9,
                        404,
                        "model_not_found"),
                new BadFrame(
                        "empty messages",
                        ws -> ws.send("{\"id\": \"c\", \"messages\": []}"),
                        "c",
                        400,
                        "invalid_value"),
                new BadFrame(
                        "duplicate running id",
                        ws -> {
                            ws.send(completion("dup", "long one", LONG, 0.9, 1).encode());
                            ws.send(completion("dup", "again", 4, 0, 1).encode());
                        },
                        "dup",
                        409,
                        "duplicate_id"),
                new BadFrame(
                        "binary frame",
                        ws -> WebSocketTestClient.join(
                                ws.socket.sendBinary(ByteBuffer.wrap(new byte[] {1, 2, 3}), true)),
                        null,
                        415,
                        "unsupported_frame"),
                new BadFrame(
                        "one frame over max-body-bytes",
                        ws -> ws.send("{\"id\": 1, \"prompt\": \"" + big + big + "\"}"),
                        null,
                        413,
                        "request_too_large"),
                new BadFrame(
                        "fragments over max-body-bytes",
                        ws -> {
                            WebSocketTestClient.join(ws.socket.sendText("{\"id\": 1, \"prompt\": \"" + big, false));
                            WebSocketTestClient.join(ws.socket.sendText(big, false));
                            WebSocketTestClient.join(ws.socket.sendText(big + "\"}", true));
                        },
                        null,
                        413,
                        "request_too_large"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badFrames")
    void aBadFrameGetsAnErrorFrameAndTheSocketServesOn(BadFrame bad) throws Exception {
        try (WebSocketTestClient ws = WebSocketTestClient.connect(node.router().httpPort())) {
            bad.send().accept(ws);
            JsonObject error = ws.awaitError();
            assertEquals(bad.id(), error.getValue("id"), error.encode());
            assertEquals(bad.status(), error.getInteger("status"), error.encode());
            assertEquals(bad.code(), error.getJsonObject("error").getString("code"), error.encode());
            assertTrue(error.getJsonObject("error").getString("message").length() > 0);
            ws.send(completion("ok", "still here", 3, 0, 1).encode());
            JsonObject done = ws.collect(Set.of("ok")).get("ok").last();
            assertEquals("done", done.getString("type"), done.encode());
        }
    }

    @Test
    void apiKeysGuardTheUpgrade() throws Exception {
        // The Router alone, with keys: the upgrade is refused before any request could reach the router.
        Vertx vertx = Vertx.vertx();
        try {
            TandemConfig config = TestNodes.config();
            var http = TestSettings.withApiKeys(config.http(), List.of("sk-test"));
            OpenAiRequestParser parser = new OpenAiRequestParser(
                    TestModels.single(
                            ServedModel.of(reference.info(), reference.tokenizer(), reference.chatTemplate())),
                    16);
            HttpServer server = vertx.createHttpServer()
                    .requestHandler(HttpApi.create(vertx, http, parser, null, null, null, null, null, ctx -> ctx.end()))
                    .listen(0, "127.0.0.1")
                    .await();
            URI uri = URI.create("ws://127.0.0.1:" + server.actualPort() + "/v1/stream");
            try {
                WebSocketTestClient.HTTP
                        .newWebSocketBuilder()
                        .buildAsync(uri, new WebSocket.Listener() {})
                        .get(5, TimeUnit.SECONDS);
                fail("the upgrade without a key succeeded");
            } catch (ExecutionException e) {
                assertTrue(e.getCause() instanceof WebSocketHandshakeException, e.toString());
                assertEquals(
                        401,
                        ((WebSocketHandshakeException) e.getCause())
                                .getResponse()
                                .statusCode());
            }
            WebSocket ok = WebSocketTestClient.HTTP
                    .newWebSocketBuilder()
                    .header("Authorization", "Bearer sk-test")
                    .buildAsync(uri, new WebSocket.Listener() {})
                    .get(5, TimeUnit.SECONDS);
            ok.abort();
        } finally {
            vertx.close().await();
        }
    }

    // ---- helpers ----

    static JsonObject completion(Object id, String prompt, int maxTokens, double temperature, long seed) {
        return new JsonObject()
                .put("id", id)
                .put("prompt", prompt)
                .put("max_tokens", maxTokens)
                .put("temperature", temperature)
                .put("seed", seed);
    }

    private void checkMatchesLocal(Result r, int[] prompt, int maxTokens, double temperature, long seed) {
        LocalGenerator.Result expected = new LocalGenerator(reference)
                .generate(prompt, new SamplingParams(temperature, 1.0, 0, seed), maxTokens, new int[0]);
        assertEquals("accepted", r.frames().get(0).getString("type"));
        assertArrayEquals(expected.tokens(), r.tokenIds());
        assertEquals(TestNodes.expectedText(reference, prompt, expected.tokens()), r.text());
        JsonObject done = r.last();
        assertEquals("done", done.getString("type"), done.encode());
        assertEquals(expected.finishReason(), done.getString("finish_reason"));
        JsonObject usage = done.getJsonObject("usage");
        assertEquals(prompt.length, usage.getInteger("prompt_tokens"));
        assertEquals(expected.tokens().length, usage.getInteger("completion_tokens"));
        assertEquals(prompt.length + expected.tokens().length, usage.getInteger("total_tokens"));
    }

    private void awaitNothingRunning(String what) {
        TestNodes.awaitTrue(
                () -> {
                    if (node.router().requests().activeRequests() != 0
                            || node.router().requests().loads().total() != 0) {
                        return false;
                    }
                    for (String worker : List.of("decode-1", "decode-2")) {
                        WorkerLoad s = EmbeddedServingTest.status(node, worker);
                        if (s.activeSequences() != 0 || s.kvBytesUsed() != 0 || s.parkedKv() != 0) {
                            return false;
                        }
                    }
                    return true;
                },
                Duration.ofSeconds(5),
                what);
    }

    private long decodeSteps() {
        return node.decodeWorkers().stream()
                .mapToLong(DecodeWorkerVerticle::steps)
                .sum();
    }
}
