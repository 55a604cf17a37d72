package dev.tandem.upstream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.UpstreamSettings;
import dev.tandem.engine.tokenizer.BpeTokenizer;
import dev.tandem.engine.tokenizer.BpeVocabularies;
import dev.tandem.engine.tokenizer.UpstreamTokenizer;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fake vLLM with a vocabulary of Llama 3's size (128,256 tokens) and an 8k context: a worker without
 * a tokenizer file learns it in bulk. How long that takes is logged (a number to report, not a timed
 * assertion); the call count is asserted, as one call per token is what the bulk learning replaces.
 */
class LargeVocabularyLearningTest {

    @Test
    void a128kVocabularyIsLearnedInFewerCallsThanTokens(@TempDir Path dir) throws IOException {
        BpeTokenizer vocabulary =
                BpeTokenizer.load(BpeVocabularies.large(dir, 128_256, 3).getParent());
        Vertx vertx = Vertx.vertx();
        FakeUpstream fake = new FakeUpstream(vertx, FakeUpstream.Kind.VLLM, false).start();
        fake.bpe = vocabulary;
        // A local fake answers in milliseconds. Now and then one of the ~150 parallel calls gets no answer at all
        // (seen waiting the whole guard: 2 x timeout + 1 s) and is retried; a short timeout keeps that cheap.
        UpstreamClient client = new UpstreamClient(
                vertx, new UpstreamSettings(fake.url(), UpstreamSettings.VLLM, 3_000, 50, 10_000, 0, "", 8998));
        try {
            long start = System.nanoTime();
            UpstreamTokenizer learned = UpstreamDiscovery.learnTokenizer(client, FakeUpstream.MODEL, 0, 8192);
            long ms = (System.nanoTime() - start) / 1_000_000;
            System.out.printf(
                    "learned %d tokens from a fake vLLM in %d ms, %d /detokenize calls%n",
                    learned.vocabSize(), ms, fake.detokenizeCalls.get());
            assertEquals(128_256, learned.vocabSize());
            // This random vocabulary holds many tokens with the delimiter's byte (real ones hold few), so many
            // batches are halved: fewer calls than tokens is what is asserted; the count is logged.
            assertTrue(fake.detokenizeCalls.get() < learned.vocabSize() / 2, fake.detokenizeCalls.get() + " calls");
            int exact = 0;
            for (int t = 0; t < learned.vocabSize(); t++) {
                byte[] bytes = vocabulary.decode(-1, t);
                if (!new String(bytes, StandardCharsets.UTF_8).contains("\uFFFD")) {
                    assertArrayEquals(bytes, learned.decode(-1, t), "token " + t);
                    exact++;
                }
            }
            System.out.printf("%d of them hold whole characters and were learned exactly%n", exact);
        } finally {
            client.close().await();
            fake.stop();
            vertx.close().await();
        }
    }
}
