package dev.tandem.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.tokenizer.Tokenizer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tokenization identical to llama.cpp's, both tokenizer kinds, on a corpus of over 2,000 lines (English,
 * code, CJK, emoji, whitespace runs, text that looks like special tokens): the vocabulary and settings
 * come from a GGUF file both read, special tokens parsed, no BOS.
 */
class GgufTokenizerOracleTest {
    private static final int LINES = 2200;

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(
            strings = {"spm-test", "spm-llama2", "bpe-llama-bpe", "bpe-qwen2", "bpe-smollm", "bpe-default", "bpe-gpt-2"
            })
    void tokenizesLikeLlamaCpp(String vocabulary) throws Exception {
        Path model = dir.resolve(vocabulary + ".gguf");
        new RandomGgufModel(
                        TestVocabularies.shapeFor(vocabulary),
                        dev.tandem.engine.gguf.GgmlType.Q8_0,
                        TestVocabularies.named(vocabulary),
                        1)
                .write(model);
        Tokenizer ours = GgufTokenizers.of(GgufFile.open(model).metadata());
        List<String> corpus = TokenizerCorpus.lines(LINES);
        assertTrue(corpus.size() >= 2000);
        JsonArray texts = new JsonArray();
        corpus.forEach(texts::add);
        JsonArray theirs = LlamaCpp.ask(
                        new JsonObject().put("model", model.toString()).put("tokenize", texts))
                .getJsonArray("tokens");
        List<String> mismatches = new ArrayList<>();
        for (int i = 0; i < corpus.size(); i++) {
            int[] expected = LlamaCpp.ints(theirs.getJsonArray(i));
            int[] actual = ours.encode(corpus.get(i), false);
            if (!Arrays.equals(expected, actual)) {
                mismatches.add("line " + i + " " + JsonArray.of(corpus.get(i)).encode() + "\n  llama.cpp "
                        + Arrays.toString(expected) + "\n  tandem    " + Arrays.toString(actual));
            }
        }
        System.out.println(vocabulary + ": " + corpus.size() + " lines, " + mismatches.size() + " mismatches");
        assertEquals(
                List.of(),
                mismatches.subList(0, Math.min(5, mismatches.size())),
                mismatches.size() + " of " + corpus.size() + " lines tokenize differently");
    }
}
