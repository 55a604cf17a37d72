package dev.tandem.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A vocabulary of Llama 3's size (128,256 tokens, about 280k merges as pairs), generated here rather
 * than committed. Loading it is measured and logged (a number to report, not a timed assertion).
 */
class LargeBpeVocabularyTest {

    @Test
    void aLlama3SizedVocabularyLoadsWholeAndRoundTrips(@TempDir Path dir) throws IOException {
        Path file = BpeVocabularies.large(dir, 128_256, 3);
        long start = System.nanoTime();
        BpeTokenizer t = BpeTokenizer.load(dir);
        long first = (System.nanoTime() - start) / 1_000_000;
        start = System.nanoTime();
        BpeTokenizer.load(dir);
        long again = (System.nanoTime() - start) / 1_000_000;
        System.out.printf(
                "tokenizer.json of %d tokens (%.1f MB): loaded in %d ms (a fresh JVM), %d ms again; footprint %.1f MB%n",
                t.vocabSize(), Files.size(file) / 1e6, first, again, t.footprintBytes() / 1e6);
        assertEquals(128_256, t.vocabSize());
        assertEquals(128_000, t.bos(), "<|begin_of_text|> follows the 128,000 vocabulary tokens");
        assertTrue(t.footprintBytes() > Files.size(file) / 4, "the footprint counts the tables");
        String text = "Ωμέγα naïve 日本語 👍🏽 the 1234 tokens\n";
        int[] ids = t.encode(text, false);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int id : ids) {
            out.writeBytes(t.decode(-1, id));
        }
        assertEquals(text, out.toString(StandardCharsets.UTF_8));
    }
}
