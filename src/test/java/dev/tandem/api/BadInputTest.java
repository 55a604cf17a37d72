package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.WorkerLoad;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every kind of bad input gets a 4xx with an OpenAI-style JSON error naming the problem, and leaves
 * nothing behind: no worker holds state afterwards and the server still serves.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputTest {
    private static final int BODY_LIMIT = 8192;
    /** KV limit: ~2 blocks of the built-in model, so a long prompt exceeds it and a short one does not. */
    private static final long KV_LIMIT = 20_000;

    private TandemNode node;
    private HttpTestClient http;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        config = config.withHttp(TestSettings.withMaxBodyBytes(config.http(), BODY_LIMIT))
                .withWorker(TestSettings.withMaxKvTransferBytes(config.worker(), KV_LIMIT));
        node = TestNodes.startEmbedded(config, 2, 2);
        http = new HttpTestClient(node.router().httpPort());
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    static Stream<Arguments> badBodies() {
        String tooLongPrompt = "x".repeat(600);
        return Stream.of(
                Arguments.of("malformed JSON", "{\"prompt\": ", 400, null),
                Arguments.of("JSON that is not an object", "[1, 2, 3]", 400, null),
                Arguments.of("empty body", "", 400, null),
                Arguments.of("missing prompt", "{\"max_tokens\": 3}", 400, "prompt"),
                Arguments.of("prompt of the wrong type", "{\"prompt\": 5}", 400, "prompt"),
                Arguments.of("prompt object", "{\"prompt\": {\"text\": \"hi\"}}", 400, "prompt"),
                Arguments.of("empty prompt", "{\"prompt\": \"\"}", 400, "prompt"),
                Arguments.of("empty token array", "{\"prompt\": []}", 400, "prompt"),
                Arguments.of("batched prompts", "{\"prompt\": [\"a\", \"b\"]}", 400, "prompt"),
                Arguments.of(
                        "prompt longer than the context", "{\"prompt\": \"" + tooLongPrompt + "\"}", 400, "prompt"),
                Arguments.of("token id above the vocabulary", "{\"prompt\": [256, 258]}", 400, "prompt"),
                Arguments.of("negative token id", "{\"prompt\": [256, -1]}", 400, "prompt"),
                Arguments.of("fractional token id", "{\"prompt\": [256, 1.5]}", 400, "prompt"),
                Arguments.of("max_tokens zero", "{\"prompt\": \"hi\", \"max_tokens\": 0}", 400, "max_tokens"),
                Arguments.of("max_tokens negative", "{\"prompt\": \"hi\", \"max_tokens\": -4}", 400, "max_tokens"),
                Arguments.of(
                        "max_tokens above the context left",
                        "{\"prompt\": \"hi\", \"max_tokens\": 510}",
                        400,
                        "max_tokens"),
                Arguments.of("max_tokens huge", "{\"prompt\": \"hi\", \"max_tokens\": 1e30}", 400, "max_tokens"),
                Arguments.of(
                        "max_tokens as a string", "{\"prompt\": \"hi\", \"max_tokens\": \"5\"}", 400, "max_tokens"),
                Arguments.of("max_tokens fractional", "{\"prompt\": \"hi\", \"max_tokens\": 2.5}", 400, "max_tokens"),
                Arguments.of(
                        "temperature below zero", "{\"prompt\": \"hi\", \"temperature\": -0.1}", 400, "temperature"),
                Arguments.of(
                        "temperature as a string",
                        "{\"prompt\": \"hi\", \"temperature\": \"hot\"}",
                        400,
                        "temperature"),
                Arguments.of("top_p zero", "{\"prompt\": \"hi\", \"top_p\": 0}", 400, "top_p"),
                Arguments.of("top_p above one", "{\"prompt\": \"hi\", \"top_p\": 1.01}", 400, "top_p"),
                Arguments.of("top_p negative", "{\"prompt\": \"hi\", \"top_p\": -1}", 400, "top_p"),
                Arguments.of("seed as a string", "{\"prompt\": \"hi\", \"seed\": \"abc\"}", 400, "seed"),
                Arguments.of("stream as a string", "{\"prompt\": \"hi\", \"stream\": \"yes\"}", 400, "stream"),
                Arguments.of("user as a number", "{\"prompt\": \"hi\", \"user\": 5}", 400, "user"),
                Arguments.of("unknown model", "{\"prompt\": \"hi\", \"model\": \"gpt-4\"}", 404, "model"),
                Arguments.of("KV over max_kv_transfer_bytes", "{\"prompt\": \"" + "y".repeat(100) + "\"}", 400, null),
                Arguments.of(
                        "body over the size limit",
                        "{\"prompt\": \"" + "z".repeat(BODY_LIMIT + 10) + "\"}",
                        413,
                        null));
    }

    @ParameterizedTest(name = "{0} → {2}")
    @MethodSource("badBodies")
    void badBodyIsRefusedWithAJsonError(String name, String body, int status, String param) {
        HttpResponse<String> response = http.post("/v1/completions", body);
        assertError(response, status);
        if (param != null) {
            assertEquals(
                    param,
                    new JsonObject(response.body()).getJsonObject("error").getString("param"),
                    response.body());
        }
    }

    static Stream<Arguments> badChatBodies() {
        String user = "{\"role\": \"user\", \"content\": \"hi\"}";
        return Stream.of(
                Arguments.of("missing messages", "{\"max_tokens\": 3}", 400, "messages"),
                Arguments.of("messages not an array", "{\"messages\": \"hi\"}", 400, "messages"),
                Arguments.of("empty messages", "{\"messages\": []}", 400, "messages"),
                Arguments.of("message not an object", "{\"messages\": [5]}", 400, "messages[0]"),
                Arguments.of(
                        "unknown role",
                        "{\"messages\": [{\"role\": \"wizard\", \"content\": \"x\"}]}",
                        400,
                        "messages[0].role"),
                Arguments.of(
                        "tool role",
                        "{\"messages\": [{\"role\": \"tool\", \"content\": \"x\"}]}",
                        400,
                        "messages[0].role"),
                Arguments.of(
                        "content of the wrong type",
                        "{\"messages\": [{\"role\": \"user\", \"content\": 7}]}",
                        400,
                        "messages[0].content"),
                Arguments.of(
                        "image content part",
                        "{\"messages\": [{\"role\": \"user\", \"content\": "
                                + "[{\"type\": \"image_url\", \"text\": \"x\"}]}]}",
                        400,
                        "messages[0].content[0].type"),
                Arguments.of(
                        "max_completion_tokens zero",
                        "{\"messages\": [" + user + "], \"max_completion_tokens\": 0}",
                        400,
                        "max_completion_tokens"),
                Arguments.of(
                        "five stop sequences",
                        "{\"messages\": [" + user + "], \"stop\": [\"a\",\"b\",\"c\",\"d\",\"e\"]}",
                        400,
                        "stop"),
                Arguments.of("empty stop sequence", "{\"messages\": [" + user + "], \"stop\": \"\"}", 400, "stop"),
                Arguments.of("stop of the wrong type", "{\"messages\": [" + user + "], \"stop\": 5}", 400, "stop"),
                Arguments.of(
                        "stream_options without stream",
                        "{\"messages\": [" + user + "], \"stream_options\": " + "{\"include_usage\": true}}",
                        400,
                        "stream_options"),
                Arguments.of(
                        "conversation longer than the context",
                        "{\"messages\": [{\"role\": \"user\", \"content\": \"" + "w".repeat(600) + "\"}]}",
                        400,
                        "messages"),
                Arguments.of("unknown model", "{\"model\": \"gpt-4o\", \"messages\": [" + user + "]}", 404, "model"));
    }

    @ParameterizedTest(name = "chat: {0} → {2}")
    @MethodSource("badChatBodies")
    void badChatBodyIsRefusedWithAJsonError(String name, String body, int status, String param) {
        HttpResponse<String> response = http.post("/v1/chat/completions", body);
        assertError(response, status);
        assertEquals(
                param, new JsonObject(response.body()).getJsonObject("error").getString("param"), response.body());
    }

    static Stream<Arguments> badRequests() {
        return Stream.of(
                Arguments.of("non-JSON content type", "POST", "/v1/completions", "text/plain", 415),
                Arguments.of("wrong method", "GET", "/v1/completions", null, 405),
                Arguments.of("unknown route", "POST", "/v1/nothing-here", "application/json", 404));
    }

    @ParameterizedTest(name = "{0} → {4}")
    @MethodSource("badRequests")
    void badRequestIsRefusedWithAJsonError(String name, String method, String path, String contentType, int status) {
        HttpRequest.Builder b = http.request(path)
                .method(
                        method,
                        method.equals("GET")
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofString("{\"prompt\": \"hi\"}"));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        assertError(http.send(b.build()), status);
    }

    @Test
    void afterTheWholeTableNothingIsHeldAndServingGoesOn() {
        badBodies().forEach(a -> http.post("/v1/completions", (String) a.get()[1]));
        badChatBodies().forEach(a -> http.post("/v1/chat/completions", (String) a.get()[1]));
        TestNodes.awaitTrue(() -> idle(), java.time.Duration.ofSeconds(5), "workers to hold nothing");
        assertEquals(0, node.router().requests().activeRequests());
        assertEquals(0, node.router().requests().loads().total());
        HttpResponse<String> ok = http.post("/v1/completions", "{\"prompt\": \"still serving\", \"max_tokens\": 5}");
        assertEquals(200, ok.statusCode(), ok.body());
    }

    private boolean idle() {
        for (String id : List.of("prefill-1", "prefill-2", "decode-1", "decode-2")) {
            WorkerLoad s = EmbeddedServingTest.status(node, id);
            if (s.prefilling() + s.activeSequences() + s.parkedKv() + s.incomingKv() != 0 || s.kvBytesUsed() != 0) {
                return false;
            }
        }
        return true;
    }

    private static void assertError(HttpResponse<String> response, int status) {
        assertEquals(status, response.statusCode(), response.body());
        assertTrue(response.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        JsonObject error = new JsonObject(response.body()).getJsonObject("error");
        assertNotNull(error, response.body());
        assertNotNull(error.getString("message"));
        assertNotNull(error.getString("type"));
        assertTrue(error.containsKey("param") && error.containsKey("code"), response.body());
    }
}
