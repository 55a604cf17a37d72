package dev.tandem.upstream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.tokenizer.BpeTokenizer;
import dev.tandem.engine.tokenizer.BpeVocabularies;
import dev.tandem.engine.tokenizer.UpstreamTokenizer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Workers in front of fake vLLM servers whose vocabulary is byte-level BPE, trained so that '日本語',
 * 'naïve', '👍🏽' and 'Ωμέγα' split inside characters; the workers are given the model's directory
 * ({@code model.tokenizer}). Streamed text equals non-streamed text, with no U+FFFD, and a stop
 * string spanning tokens ends the text.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UpstreamByteLevelTest {
    static final String ANSWER = "日本語 naïve 👍🏽 Ωμέγα";
    static final String CORPUS = "日本 日本 日本 本語 naé naé naà naà naö naö eve eve 👍 👍 🏽 Ωμ Ωμ μέ έγ γα γα "
            + "The quick brown fox doesn't jump; it's 123 4567 naive.\n\n  Done!";

    UpstreamCluster cluster;
    BpeTokenizer vocabulary;

    @BeforeAll
    void start(@TempDir Path modelDir) throws IOException {
        String json = BpeVocabularies.trained(CORPUS, 40);
        Files.writeString(modelDir.resolve("tokenizer.json"), json);
        vocabulary = BpeTokenizer.read(
                new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)), BpeVocabularies.EOT, "test");
        cluster = new UpstreamCluster(FakeUpstream.Kind.VLLM);
        FakeUpstream prefill = fake(true);
        FakeUpstream decode = fake(false);
        cluster.worker(cluster.upstream(prefill.url()), "prefill-bpe", true, modelDir.toString());
        cluster.worker(cluster.upstream(decode.url()), "decode-bpe", false, modelDir.toString());
        cluster.awaitModel();
    }

    private FakeUpstream fake(boolean prefillMode) {
        FakeUpstream f = cluster.fake(prefillMode);
        f.bpe = vocabulary;
        f.answerText = ANSWER;
        return f;
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void theAnswerSplitsInsideCharacters() {
        int[] ids = vocabulary.encode(ANSWER, false);
        long partial = java.util.Arrays.stream(ids)
                .filter(id -> new String(vocabulary.decode(-1, id), StandardCharsets.UTF_8).contains("\uFFFD"))
                .count();
        assertTrue(partial >= 4, partial + " tokens hold part of a character: the test needs more");
    }

    @Test
    void streamedTextEqualsNonStreamedTextWithoutReplacementCharacters() {
        HttpResponse<String> whole = complete(false, null);
        assertEquals(200, whole.statusCode(), whole.body());
        String text = new JsonObject(whole.body())
                .getJsonArray("choices")
                .getJsonObject(0)
                .getString("text");
        assertEquals(ANSWER, text);

        HttpResponse<String> streamed = complete(true, null);
        assertEquals(200, streamed.statusCode(), streamed.body());
        StringBuilder sb = new StringBuilder();
        for (String event : streamed.body().split("\n\n")) {
            String data = event.substring("data: ".length());
            if (data.equals("[DONE]")) {
                continue;
            }
            JsonArray choices = new JsonObject(data).getJsonArray("choices");
            if (choices != null && !choices.isEmpty()) {
                sb.append(choices.getJsonObject(0).getString("text", ""));
            }
        }
        assertEquals(text, sb.toString());
        assertFalse(sb.toString().contains("\uFFFD"));
    }

    @Test
    void aStopStringSpanningTokensEndsTheText() {
        HttpResponse<String> r = complete(false, "本語");
        assertEquals(200, r.statusCode(), r.body());
        JsonObject choice = new JsonObject(r.body()).getJsonArray("choices").getJsonObject(0);
        assertEquals("日", choice.getString("text"));
        assertEquals("stop", choice.getString("finish_reason"));
    }

    @Test
    void withoutAFileTheVocabularyIsLearnedInBulkAndExactForWholeCharacters() {
        FakeUpstream f = fake(false);
        UpstreamClient client = new UpstreamClient(cluster.fakes, cluster.upstream(f.url()));
        try {
            UpstreamTokenizer learned =
                    UpstreamDiscovery.learnTokenizer(client, FakeUpstream.MODEL, 0, FakeUpstream.CONTEXT);
            assertEquals(vocabulary.vocabSize(), learned.vocabSize());
            assertTrue(
                    f.detokenizeCalls.get() < 40,
                    f.detokenizeCalls.get() + " /detokenize calls for " + learned.vocabSize() + " tokens");
            for (int t = 0; t < learned.vocabSize(); t++) {
                byte[] exact = vocabulary.decode(-1, t);
                String text = new String(exact, StandardCharsets.UTF_8);
                if (!text.contains("\uFFFD") && vocabulary.decode(-1, t).length > 0) {
                    assertArrayEquals(exact, learned.decode(-1, t), "token " + t);
                }
            }
        } finally {
            client.close();
        }
    }

    private HttpResponse<String> complete(boolean stream, String stop) {
        JsonObject body = new JsonObject()
                .put("model", FakeUpstream.MODEL)
                .put("prompt", "Say it:")
                .put("max_tokens", 64)
                .put("temperature", 0)
                .put("stream", stream);
        if (stop != null) {
            body.put("stop", new JsonArray().add(stop));
        }
        return cluster.http.post("/v1/completions", body.encode());
    }
}
