package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The OpenAI endpoints as the SDKs use them: chat, stop sequences, usage chunks, models, refusals by name. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OpenAiApiTest {
    private TandemNode node;
    private HttpTestClient http;

    @BeforeAll
    void start() {
        node = TestNodes.startEmbedded(TestNodes.config(), 1, 1);
        http = new HttpTestClient(node.router().httpPort());
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private static JsonObject chat(boolean stream) {
        return new JsonObject()
                .put("model", "tandem-builtin")
                .put(
                        "messages",
                        new JsonArray()
                                .add(new JsonObject().put("role", "system").put("content", "Be brief."))
                                .add(new JsonObject()
                                        .put("role", "user")
                                        .put(
                                                "content",
                                                new JsonArray()
                                                        .add(new JsonObject()
                                                                .put("type", "text")
                                                                .put("text", "Hello there")))))
                .put("max_completion_tokens", 20)
                .put("temperature", 0.7)
                .put("seed", 99)
                .put("stream", stream);
    }

    /** Data payloads of an SSE body, in order. */
    private static List<String> events(String body) {
        List<String> out = new ArrayList<>();
        for (String e : body.split("\n\n")) {
            if (!e.isBlank()) {
                assertTrue(e.startsWith("data: "), e);
                out.add(e.substring(6));
            }
        }
        return out;
    }

    @Test
    void chatCompletionRendersTheTemplateAndAnswersAsAssistant() {
        HttpResponse<String> r = http.post("/v1/chat/completions", chat(false).encode());
        assertEquals(200, r.statusCode(), r.body());
        JsonObject json = new JsonObject(r.body());
        assertEquals("chat.completion", json.getString("object"));
        assertTrue(json.getString("id").startsWith("chatcmpl-"));
        JsonObject choice = json.getJsonArray("choices").getJsonObject(0);
        assertEquals("assistant", choice.getJsonObject("message").getString("role"));
        String prompt = node.engine()
                .chatTemplate()
                .render(List.of(
                        new dev.tandem.engine.tokenizer.ChatMessage("system", "Be brief."),
                        new dev.tandem.engine.tokenizer.ChatMessage("user", "Hello there")));
        int[] promptTokens = node.engine().tokenizer().encode(prompt, true);
        assertEquals(promptTokens.length, json.getJsonObject("usage").getInteger("prompt_tokens"));
        var expected = new dev.tandem.engine.LocalGenerator(node.engine())
                .generate(promptTokens, new dev.tandem.engine.SamplingParams(0.7, 1, 0, 99), 20, new int[0]);
        assertArrayEquals(expected.tokens(), EmbeddedServingTest.ids(choice.getJsonArray("token_ids")));
        assertEquals(
                TestNodes.expectedText(node.engine(), promptTokens, expected.tokens()),
                choice.getJsonObject("message").getString("content"));
    }

    @Test
    void chatStreamHasRoleFirstFinishLastAndTheSameText() {
        String whole = new JsonObject(
                        http.post("/v1/chat/completions", chat(false).encode()).body())
                .getJsonArray("choices")
                .getJsonObject(0)
                .getJsonObject("message")
                .getString("content");
        HttpResponse<String> r = http.post(
                "/v1/chat/completions",
                chat(true)
                        .put("stream_options", new JsonObject().put("include_usage", true))
                        .encode());
        List<String> events = events(r.body());
        assertEquals("[DONE]", events.get(events.size() - 1));
        JsonObject first = new JsonObject(events.get(0));
        assertEquals("chat.completion.chunk", first.getString("object"));
        assertEquals(
                "assistant",
                first.getJsonArray("choices")
                        .getJsonObject(0)
                        .getJsonObject("delta")
                        .getString("role"));
        StringBuilder text = new StringBuilder();
        String finish = null;
        JsonObject usage = null;
        for (String e : events.subList(0, events.size() - 1)) {
            JsonObject chunk = new JsonObject(e);
            if (chunk.getJsonArray("choices").isEmpty()) {
                usage = chunk.getJsonObject("usage");
                continue;
            }
            JsonObject c = chunk.getJsonArray("choices").getJsonObject(0);
            String content = c.getJsonObject("delta").getString("content");
            text.append(content == null ? "" : content);
            if (c.getString("finish_reason") != null) {
                finish = c.getString("finish_reason");
            }
        }
        assertEquals(whole, text.toString());
        assertEquals("length", finish);
        assertEquals(20, usage.getInteger("completion_tokens"));
    }

    @Test
    void usageChunkOnlyWhenAskedFor() {
        JsonObject body =
                new JsonObject().put("prompt", "usage?").put("max_tokens", 5).put("stream", true);
        assertFalse(http.post("/v1/completions", body.encode()).body().contains("\"usage\""));
        List<String> events = events(http.post(
                        "/v1/completions",
                        body.copy()
                                .put("stream_options", new JsonObject().put("include_usage", true))
                                .encode())
                .body());
        JsonObject usageChunk = new JsonObject(events.get(events.size() - 2));
        assertTrue(usageChunk.getJsonArray("choices").isEmpty());
        assertEquals(5, usageChunk.getJsonObject("usage").getInteger("completion_tokens"));
    }

    @Test
    void stopSequenceEndsTheOutputBeforeItStreamedOrNot() {
        JsonObject body = new JsonObject()
                .put("prompt", "stop here")
                .put("max_tokens", 60)
                .put("temperature", 0);
        String full = new JsonObject(http.post("/v1/completions", body.encode()).body())
                .getJsonArray("choices")
                .getJsonObject(0)
                .getString("text");
        String stop = full.substring(full.length() / 2, full.length() / 2 + 2);
        String expected = full.substring(0, full.indexOf(stop));
        for (Object stopValue : List.of(stop, new JsonArray().add("never-there").add(stop))) {
            JsonObject plain = new JsonObject(http.post(
                                    "/v1/completions",
                                    body.copy().put("stop", stopValue).encode())
                            .body())
                    .getJsonArray("choices")
                    .getJsonObject(0);
            assertEquals(expected, plain.getString("text"));
            assertEquals("stop", plain.getString("finish_reason"));
            HttpTestClient.SseResult sse = HttpTestClient.parseSse(http.post(
                            "/v1/completions",
                            body.copy()
                                    .put("stop", stopValue)
                                    .put("stream", true)
                                    .encode())
                    .body());
            assertEquals(expected, sse.text());
            assertEquals("stop", sse.finishReason());
        }
        TestNodes.awaitTrue(
                () -> EmbeddedServingTest.status(node, "decode-1").activeSequences() == 0,
                java.time.Duration.ofSeconds(2),
                "the stopped sequences to leave the decode batch");
    }

    @Test
    void modelsListsTheServedModel() {
        HttpResponse<String> r = http.send(http.request("/v1/models").GET().build());
        assertEquals(200, r.statusCode());
        JsonObject json = new JsonObject(r.body());
        assertEquals("list", json.getString("object"));
        assertEquals(
                "tandem-builtin", json.getJsonArray("data").getJsonObject(0).getString("id"));
        assertEquals("model", json.getJsonArray("data").getJsonObject(0).getString("object"));
        assertEquals(
                node.engine().info().config().seqLen(),
                json.getJsonArray("data").getJsonObject(0).getInteger("context_length"),
                "the context length the workers' model cards announce");
        assertEquals(
                200,
                http.send(http.request("/v1/models/tandem-builtin").GET().build())
                        .statusCode());
        HttpResponse<String> missing =
                http.send(http.request("/v1/models/gpt-4").GET().build());
        assertEquals(404, missing.statusCode());
        assertEquals(
                "model_not_found",
                new JsonObject(missing.body()).getJsonObject("error").getString("code"));
    }

    static Stream<Arguments> unsupported() {
        return Stream.of(
                Arguments.of(
                        "/v1/chat/completions", "tools", new JsonArray().add(new JsonObject().put("type", "function"))),
                Arguments.of("/v1/chat/completions", "tool_choice", "auto"),
                Arguments.of("/v1/chat/completions", "n", 2),
                Arguments.of("/v1/chat/completions", "logit_bias", new JsonObject().put("50", 10)),
                Arguments.of("/v1/chat/completions", "logprobs", true),
                Arguments.of("/v1/chat/completions", "response_format", new JsonObject().put("type", "json_object")),
                Arguments.of("/v1/chat/completions", "frequency_penalty", 0.5),
                Arguments.of("/v1/completions", "n", 3),
                Arguments.of("/v1/completions", "best_of", 2),
                Arguments.of("/v1/completions", "echo", true),
                Arguments.of("/v1/completions", "logprobs", 2),
                Arguments.of("/v1/completions", "suffix", "tail"));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("unsupported")
    void fieldsThatCannotBeHonouredAreRefusedByName(String path, String field, Object value) {
        JsonObject body = path.contains("chat")
                ? chat(false)
                : new JsonObject().put("prompt", "x").put("max_tokens", 2);
        HttpResponse<String> r = http.post(path, body.put(field, value).encode());
        assertEquals(400, r.statusCode(), r.body());
        JsonObject error = new JsonObject(r.body()).getJsonObject("error");
        assertEquals(field, error.getString("param"));
        assertTrue(error.getString("message").contains(field), error.getString("message"));
    }

    @Test
    void unknownFieldsAndNeutralValuesAreIgnored() {
        JsonObject body = chat(false)
                .put("metadata", new JsonObject().put("k", "v"))
                .put("store", false)
                .put("n", 1)
                .put("logprobs", false)
                .put("frequency_penalty", 0)
                .put("some_future_field", 1);
        assertEquals(200, http.post("/v1/chat/completions", body.encode()).statusCode());
    }

    @Test
    void headersOfAStreamTellProxiesNotToBuffer() {
        HttpResponse<String> r = http.send(http.request("/v1/completions")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"h\",\"max_tokens\":2,\"stream\":true}"))
                .build());
        assertEquals("no", r.headers().firstValue("X-Accel-Buffering").orElse(null));
        assertEquals("no-cache", r.headers().firstValue("Cache-Control").orElse(null));
        assertNull(r.headers().firstValue("Content-Length").orElse(null));
    }
}
