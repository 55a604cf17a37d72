package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.tokenizer.ByteTokenizer;
import dev.tandem.engine.tokenizer.ChatMessage;
import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.TestTokenizers;
import dev.tandem.router.ServedModel;
import dev.tandem.router.ServedModels;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code model} selects what a request runs on — its tokenizer, chat template, context and vocabulary —
 * on every entry point the parser serves (completions, chat, and the streaming channels' bodies); and
 * each way of not naming a servable model is its own error.
 */
class ModelSelectionTest {
    private static final ServedModel BYTES =
            new ServedModel("bytes", 1, 512, ByteTokenizer.INSTANCE, ChatTemplate.ROLE_TAGS);
    private static final ServedModel STORIES =
            new ServedModel("stories", 2, 64, TestTokenizers.llama2c(), ChatTemplate.LLAMA2);

    /** Two models, and a third whose workers are gone. */
    private static final ServedModels TWO = new ServedModels() {
        @Override
        public Pick pick(String requested) {
            if (requested == null) {
                return Pick.missing(Miss.REQUIRED, "name one of bytes, stories");
            }
            return switch (requested) {
                case "bytes" -> Pick.of(BYTES);
                case "stories" -> Pick.of(STORIES);
                case "gone" -> Pick.missing(Miss.UNAVAILABLE, "no workers");
                default -> Pick.missing(Miss.NOT_FOUND, "no such model");
            };
        }

        @Override
        public List<ServedModel> listed() {
            return List.of(BYTES, STORIES);
        }

        @Override
        public ServedModel known(String name) {
            return pick(name).model();
        }
    };

    private final OpenAiRequestParser parser = new OpenAiRequestParser(TWO, 16);

    static Stream<Arguments> entryPoints() {
        return Stream.of(Arguments.of("completion"), Arguments.of("chat"), Arguments.of("streaming"));
    }

    private CompletionCall parse(String entry, JsonObject body) {
        return switch (entry) {
            case "completion" -> parser.parseCompletion(body, null);
            case "chat" -> parser.parseChat(body, null);
            default -> parser.parseStreaming(body, null);
        };
    }

    private static JsonObject body(String entry, String model) {
        JsonObject body = "chat".equals(entry)
                ? new JsonObject()
                        .put(
                                "messages",
                                new JsonArray()
                                        .add(new JsonObject()
                                                .put("role", "user")
                                                .put("content", "hi")))
                : new JsonObject().put("prompt", "the end");
        return model == null ? body : body.put("model", model);
    }

    @ParameterizedTest
    @MethodSource("entryPoints")
    void theNamedModelTokenizesAndBoundsTheRequest(String entry) {
        CompletionCall stories = parse(entry, body(entry, "stories"));
        CompletionCall bytes = parse(entry, body(entry, "bytes"));
        assertSame(STORIES, stories.generation().model());
        assertSame(BYTES, bytes.generation().model());
        assertEquals("stories", stories.model(), "the response names the model");
        String text =
                "chat".equals(entry) ? ChatTemplate.LLAMA2.render(List.of(new ChatMessage("user", "hi"))) : "the end";
        assertArrayEquals(
                STORIES.tokenizer().encode(text, true), stories.generation().promptTokens());
        assertTrue(
                stories.generation().promptTokens().length < bytes.generation().promptTokens().length);
        // The context left for the answer is the model's own.
        JsonObject tooMany = body(entry, "stories").put("max_tokens", 100);
        ApiException e = assertThrows(ApiException.class, () -> parse(entry, tooMany));
        assertEquals(400, e.status());
        parse(entry, body(entry, "bytes").put("max_tokens", 100));
    }

    @ParameterizedTest
    @MethodSource("entryPoints")
    void tokenIdsAreCheckedAgainstTheNamedModelsVocabulary(String entry) {
        if (entry.equals("chat")) {
            return; // chat takes text only
        }
        int id = 300; // in the test llama2.c vocabulary, beyond the byte tokenizer's 258
        JsonObject ids = new JsonObject().put("prompt", new JsonArray().add(1).add(id));
        assertEquals(
                id,
                parse(entry, ids.copy().put("model", "stories")).generation().promptTokens()[1]);
        ApiException e =
                assertThrows(ApiException.class, () -> parse(entry, ids.copy().put("model", "bytes")));
        assertEquals("prompt", e.param());
    }

    static Stream<Arguments> misses() {
        return Stream.of(
                Arguments.of(null, 400, "missing_required_parameter"),
                Arguments.of("gpt-4o", 404, "model_not_found"),
                Arguments.of("gone", 503, "model_unavailable"),
                Arguments.of("", 400, "invalid_value"));
    }

    @ParameterizedTest
    @MethodSource("misses")
    void eachWayOfNotNamingAServableModelIsItsOwnError(String model, int status, String code) {
        for (String entry : List.of("completion", "chat", "streaming")) {
            ApiException e = assertThrows(ApiException.class, () -> parse(entry, body(entry, model)));
            assertEquals(status, e.status(), entry);
            assertEquals(code, e.code(), entry);
            assertEquals("model", e.param(), entry);
        }
    }

    @ParameterizedTest
    @MethodSource("entryPoints")
    void aModelThatIsNotAStringIsAWrongType(String entry) {
        ApiException e = assertThrows(
                ApiException.class, () -> parse(entry, body(entry, null).put("model", 7)));
        assertEquals(400, e.status());
        assertEquals("model", e.param());
    }
}
