package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.tokenizer.ByteTokenizer;
import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.JinjaChatTemplate;
import dev.tandem.engine.tokenizer.Tokenizer;
import dev.tandem.router.ServedModel;
import dev.tandem.router.ServedModels;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Which bodies an event loop parses itself: token ids and short text for a tokenizer in this process;
 * long text and any text for a tokenizer that asks a server go to a worker thread.
 */
class EventLoopParsingTest {
    /** Encodes like the byte tokenizer but, like an upstream server's, not in this process. */
    private static final Tokenizer REMOTE = new Tokenizer() {
        @Override
        public int vocabSize() {
            return ByteTokenizer.INSTANCE.vocabSize();
        }

        @Override
        public int bos() {
            return ByteTokenizer.INSTANCE.bos();
        }

        @Override
        public int eos() {
            return ByteTokenizer.INSTANCE.eos();
        }

        @Override
        public int[] encode(String text, boolean addBos) {
            if (Context.isOnEventLoopThread()) {
                throw new AssertionError("a server's tokenizer was asked from an event loop");
            }
            return ByteTokenizer.INSTANCE.encode(text, addBos);
        }

        @Override
        public byte[] decode(int previousToken, int token) {
            return ByteTokenizer.INSTANCE.decode(previousToken, token);
        }

        @Override
        public int maxTokenBytes() {
            return 1;
        }

        @Override
        public boolean isEndOfSequence(int token) {
            return ByteTokenizer.INSTANCE.isEndOfSequence(token);
        }

        @Override
        public boolean encodesInProcess() {
            return false;
        }
    };

    private static final ServedModel LOCAL =
            new ServedModel("local", 1, 4096, ByteTokenizer.INSTANCE, ChatTemplate.ROLE_TAGS);
    private static final ServedModel SERVER = new ServedModel("server", 2, 4096, REMOTE, ChatTemplate.ROLE_TAGS);
    private static final ServedModel JINJA = new ServedModel(
            "jinja",
            3,
            4096,
            ByteTokenizer.INSTANCE,
            new JinjaChatTemplate("own", "{% for m in messages %}{{ m.content }}{% endfor %}", java.util.Map.of()));

    private static final ServedModels MODELS = new ServedModels() {
        @Override
        public Pick pick(String requested) {
            if ("local".equals(requested)) {
                return Pick.of(LOCAL);
            }
            if ("server".equals(requested)) {
                return Pick.of(SERVER);
            }
            if ("jinja".equals(requested)) {
                return Pick.of(JINJA);
            }
            return Pick.missing(Miss.NOT_FOUND, "no such model");
        }

        @Override
        public List<ServedModel> listed() {
            return List.of(LOCAL, SERVER);
        }

        @Override
        public ServedModel known(String name) {
            return pick(name).model();
        }
    };

    private final OpenAiRequestParser parser = new OpenAiRequestParser(MODELS, 16);

    static Stream<Arguments> bodies() {
        String limit = "a".repeat(OpenAiRequestParser.EVENT_LOOP_TEXT_CHARS);
        return Stream.of(
                Arguments.of("token ids", "{\"model\":\"local\",\"prompt\":[1,2,3]}", true),
                Arguments.of("token ids for a server's model", "{\"model\":\"server\",\"prompt\":[1,2,3]}", true),
                Arguments.of("short text", "{\"model\":\"local\",\"prompt\":\"Once upon a time\"}", true),
                Arguments.of("text at the limit", "{\"model\":\"local\",\"prompt\":\"" + limit + "\"}", true),
                Arguments.of("text over the limit", "{\"model\":\"local\",\"prompt\":\"" + limit + "b\"}", false),
                Arguments.of("short text for a server's tokenizer", "{\"model\":\"server\",\"prompt\":\"hi\"}", false),
                Arguments.of(
                        "a short chat",
                        "{\"model\":\"local\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                        true),
                Arguments.of(
                        "a short chat for a model with its own Jinja template",
                        "{\"model\":\"jinja\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                        false),
                Arguments.of(
                        "a short completion for a model with its own Jinja template",
                        "{\"model\":\"jinja\",\"prompt\":\"hi\"}",
                        true),
                Arguments.of(
                        "a chat for a server's tokenizer",
                        "{\"model\":\"server\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                        false),
                Arguments.of(
                        "a long chat over several messages",
                        "{\"model\":\"local\",\"messages\":[{\"role\":\"user\",\"content\":\"" + limit.substring(100)
                                + "\"},{\"role\":\"assistant\",\"content\":\"" + limit.substring(100) + "\"}]}",
                        false),
                Arguments.of("an unknown model (an error to report)", "{\"model\":\"nope\",\"prompt\":\"hi\"}", true),
                Arguments.of("no prompt (an error to report)", "{\"model\":\"local\"}", true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bodies")
    void cheapBodiesAreParsedOnTheEventLoop(String name, String json, boolean cheap) {
        assertEquals(cheap, parser.cheap(new JsonObject(json)), name);
    }

    @Test
    void theParseRunsWhereCheapSays() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            assertTrue(parsedOnEventLoop(vertx, "{\"model\":\"local\",\"prompt\":\"hi\"}"));
            assertFalse(parsedOnEventLoop(vertx, "{\"model\":\"server\",\"prompt\":\"hi\"}"));
            assertFalse(parsedOnEventLoop(vertx, "{\"model\":\"local\",\"prompt\":\"" + "a".repeat(1_000) + "\"}"));
        } finally {
            vertx.close().await();
        }
    }

    /** Parses {@code json} from an event loop; whether the parse ran on it, and checks the call succeeded there. */
    private boolean parsedOnEventLoop(Vertx vertx, String json) throws Exception {
        CompletableFuture<Boolean> where = new CompletableFuture<>();
        vertx.runOnContext(v -> {
            JsonObject body = new JsonObject(json);
            boolean[] onLoop = new boolean[1];
            parser.parse(vertx, body, () -> {
                        onLoop[0] = Context.isOnEventLoopThread();
                        return parser.parseCompletion(body, null);
                    })
                    .onComplete(ar -> {
                        if (ar.failed()) {
                            where.completeExceptionally(ar.cause());
                        } else if (!Context.isOnEventLoopThread()) {
                            where.completeExceptionally(new AssertionError("completed off the caller's event loop"));
                        } else {
                            where.complete(onLoop[0]);
                        }
                    });
        });
        return where.get(10, TimeUnit.SECONDS);
    }
}
