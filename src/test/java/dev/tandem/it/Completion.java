package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.engine.Engine;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.reference.ReferenceEngine;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;

/**
 * A completion request for the ITs and what it must produce: every node of a test cluster runs the
 * built-in model, so the exact tokens are computed here, in the test JVM, with the same engine.
 */
record Completion(String prompt, SamplingParams sampling, int maxTokens) {
    /** The built-in model every IT node runs (default kv-block-size). */
    static final Engine ENGINE = ReferenceEngine.builtin(16);

    /** A sampled completion with its own seed. */
    static Completion seeded(String prompt, long seed, int maxTokens) {
        return new Completion(prompt, new SamplingParams(0.8, 0.95, 0, seed), maxTokens);
    }

    JsonObject body(boolean stream) {
        return new JsonObject()
                .put("prompt", prompt)
                .put("max_tokens", maxTokens)
                .put("stream", stream)
                .put("temperature", sampling.temperature())
                .put("top_p", sampling.topP())
                .put("seed", sampling.seed());
    }

    int[] promptTokens() {
        return ENGINE.tokenizer().encode(prompt, true);
    }

    /** The tokens an undisturbed local run generates. */
    int[] expectedTokens() {
        return new LocalGenerator(ENGINE)
                .generate(promptTokens(), sampling, maxTokens, new int[0])
                .tokens();
    }

    String expectedText() {
        return TestNodes.expectedText(ENGINE, promptTokens(), expectedTokens());
    }

    /** The text and token ids of a 200 response, streamed or not, and the workers first chosen for it. */
    record Answer(String text, int[] tokenIds, String requestId, String prefillWorker, String decodeWorker) {
        static Answer of(HttpResponse<String> response, boolean streamed, String who) {
            assertEquals(200, response.statusCode(), who + " answered " + response.body());
            String requestId =
                    response.headers().firstValue("X-Tandem-Request-Id").orElse(null);
            String prefill =
                    response.headers().firstValue("X-Tandem-Prefill-Worker").orElse(null);
            String decode =
                    response.headers().firstValue("X-Tandem-Decode-Worker").orElse(null);
            if (streamed) {
                HttpTestClient.SseResult sse = HttpTestClient.parseSse(response.body());
                assertEquals(1, sse.doneCount(), who + ": one [DONE]");
                return new Answer(sse.text(), sse.tokenIds(), requestId, prefill, decode);
            }
            JsonObject choice =
                    new JsonObject(response.body()).getJsonArray("choices").getJsonObject(0);
            JsonArray ids = choice.getJsonArray("token_ids");
            int[] tokens = new int[ids.size()];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = ids.getInteger(i);
            }
            return new Answer(choice.getString("text"), tokens, requestId, prefill, decode);
        }
    }
}
