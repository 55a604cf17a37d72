package dev.tandem;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.TandemConfig;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.SamplingParams;
import dev.tandem.node.TandemNode;
import io.micrometer.core.instrument.DistributionSummary;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * KV reuse through the whole embedded cluster (router, 2 prefill and 2 decode workers, the default
 * cache-aware policy) over HTTP: a repeated prompt is prefilled from the cache, a conversation's second
 * turn reuses the first's KV where it already is, and the answers stay those of an uncached run.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KvReuseServingTest {
    private static final String SYSTEM = "You are Tandem's test assistant. You answer in one short sentence, you never "
            + "repeat the question, and you keep every answer polite, exact and free of guesses. ";

    private TandemNode node;
    private HttpTestClient http;
    private int blockSize;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        node = TestNodes.startEmbedded(config, 2, 2);
        http = new HttpTestClient(node.router().httpPort());
        blockSize = config.worker().kvBlockSize();
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private JsonObject post(String path, JsonObject body) {
        HttpResponse<String> r = http.post(path, body.encode());
        assertEquals(200, r.statusCode(), r.body());
        return new JsonObject(r.body());
    }

    private static int cached(JsonObject response) {
        return response.getJsonObject("usage")
                .getJsonObject("prompt_tokens_details")
                .getInteger("cached_tokens");
    }

    private static int[] ids(JsonObject response) {
        JsonArray a = response.getJsonArray("choices").getJsonObject(0).getJsonArray("token_ids");
        int[] out = new int[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.getInteger(i);
        }
        return out;
    }

    private double kvMoved() {
        DistributionSummary s =
                node.metrics().registry().find("tandem.request.kv.moved").summary();
        return s == null ? 0 : s.totalAmount();
    }

    private void awaitIndexed(int[] prompt, int blocks) {
        TestNodes.awaitIndexed(node, blockSize, prompt, blocks);
    }

    @Test
    void theSamePromptTwiceIsPrefilledFromTheCacheWithTheSameAnswer() {
        String prompt = SYSTEM + "Question one: what does a prefix cache keep?";
        int[] tokens = node.engine().tokenizer().encode(prompt, true);
        assertTrue(tokens.length >= 8 * blockSize, "at least 8 blocks: " + tokens.length + " tokens");
        JsonObject body =
                new JsonObject().put("prompt", prompt).put("max_tokens", 12).put("temperature", 0);
        JsonObject first = post("/v1/completions", body);
        awaitIndexed(tokens, tokens.length / blockSize);
        JsonObject second = post("/v1/completions", body);

        int promptTokens = second.getJsonObject("usage").getInteger("prompt_tokens");
        assertTrue(
                cached(second) >= promptTokens - blockSize,
                "cached " + cached(second) + " of " + promptTokens + " prompt tokens");
        assertEquals(text(first), text(second));
        int[] expected = new LocalGenerator(node.engine())
                .generate(tokens, SamplingParams.GREEDY, 12, new int[0])
                .tokens();
        assertArrayEquals(expected, ids(second), "as an uncached run");
    }

    @Test
    void aConversationsSecondTurnReusesTheFirstTurnsKv() {
        JsonArray turnOne = new JsonArray()
                .add(new JsonObject().put("role", "system").put("content", SYSTEM))
                .add(new JsonObject().put("role", "user").put("content", "Name a colour."));
        JsonObject request =
                new JsonObject().put("max_tokens", 10).put("temperature", 0.8).put("seed", 5);
        double before = kvMoved();
        JsonObject first = post("/v1/chat/completions", request.copy().put("messages", turnOne));
        double firstMoved = kvMoved() - before;
        int firstPrompt = first.getJsonObject("usage").getInteger("prompt_tokens");
        String answer = first.getJsonArray("choices")
                .getJsonObject(0)
                .getJsonObject("message")
                .getString("content");

        JsonArray turnTwo = turnOne.copy()
                .add(new JsonObject().put("role", "assistant").put("content", answer))
                .add(new JsonObject().put("role", "user").put("content", "And another?"));
        int[] secondPrompt =
                node.engine().tokenizer().encode(node.engine().chatTemplate().render(messages(turnTwo)), true);
        // The decode worker keeps the first turn's blocks when it ends; its event reaches the index a moment later.
        TestNodes.awaitIndexed(node, blockSize, secondPrompt, firstPrompt / blockSize, "decode-");
        double between = kvMoved();
        JsonObject second = post("/v1/chat/completions", request.copy().put("messages", turnTwo));
        double secondMoved = kvMoved() - between;

        assertTrue(
                cached(second) >= firstPrompt - blockSize,
                "cached " + cached(second) + " covers the first turn's " + firstPrompt + " prompt tokens");
        assertTrue(
                secondMoved <= firstMoved / 4,
                "the second turn moved " + secondMoved + " KV bytes, the first " + firstMoved);
        int[] expected = new LocalGenerator(node.engine())
                .generate(secondPrompt, new SamplingParams(0.8, 1.0, 0, 5), 10, new int[0])
                .tokens();
        assertArrayEquals(expected, ids(second), "as an uncached run");
    }

    private static java.util.List<dev.tandem.engine.tokenizer.ChatMessage> messages(JsonArray array) {
        java.util.List<dev.tandem.engine.tokenizer.ChatMessage> out = new java.util.ArrayList<>();
        for (int i = 0; i < array.size(); i++) {
            JsonObject m = array.getJsonObject(i);
            out.add(new dev.tandem.engine.tokenizer.ChatMessage(m.getString("role"), m.getString("content")));
        }
        return out;
    }

    private static String text(JsonObject response) {
        return response.getJsonArray("choices").getJsonObject(0).getString("text");
    }
}
