package dev.tandem.engine.reference;

import static dev.tandem.engine.reference.EngineTestSupport.assertBitIdentical;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.ModelConfig;
import dev.tandem.engine.tokenizer.ByteTokenizer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class Llama2cCheckpointTest {
    @TempDir
    Path dir;

    private static ModelWeights small(boolean tied) {
        return ModelWeights.random(new ModelConfig(16, 40, 2, 4, 2, ByteTokenizer.VOCAB_SIZE, 32, tied), 3);
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void writeThenLoadGivesSameModel(boolean tied) throws IOException {
        ModelWeights weights = small(tied);
        Path file = dir.resolve("tiny-" + tied + ".bin");
        Llama2cCheckpointWriter.write(file, weights);
        assertEquals(Llama2cCheckpoint.fileSize(weights.config()), Files.size(file));

        ReferenceEngine memory = ReferenceEngine.create("memory", weights, ByteTokenizer.INSTANCE, 8);
        ReferenceEngine loaded = ReferenceEngine.load(file, null, 8);
        assertEquals("tiny-" + tied, loaded.info().name());
        assertEquals(weights.config(), loaded.info().config());
        assertEquals(memory.info().fingerprint(), loaded.info().fingerprint());
        int[] prompt = ByteTokenizer.INSTANCE.encode("round trip", true);
        assertBitIdentical(
                memory.prefill(memory.newCache(), prompt, () -> false),
                loaded.prefill(loaded.newCache(), prompt, () -> false),
                "logits");
    }

    @Test
    void builtinRoundTripsThroughAFile() throws IOException {
        Path file = dir.resolve("builtin.bin");
        Llama2cCheckpointWriter.write(file, ReferenceEngine.builtinWeights());
        ReferenceEngine loaded = ReferenceEngine.load(file, null, 16);
        ReferenceEngine builtin = ReferenceEngine.builtin(16);
        assertEquals(builtin.info().fingerprint(), loaded.info().fingerprint());
        int[] prompt = builtin.tokenizer().encode("Once upon a time", true);
        assertEquals(
                java.util.Arrays.toString(EngineTestSupport.generate(builtin, prompt, 10)),
                java.util.Arrays.toString(EngineTestSupport.generate(loaded, prompt, 10)));
    }

    @Test
    void headerIsLlama2cLayout() throws IOException {
        Path file = dir.resolve("h.bin");
        Llama2cCheckpointWriter.write(file, small(false));
        ByteBuffer h = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        int[] header = new int[7];
        for (int i = 0; i < 7; i++) {
            header[i] = h.getInt();
        }
        // untied: vocab_size is stored negative
        assertEquals("[16, 40, 2, 4, 2, -258, 32]", java.util.Arrays.toString(header));
        assertEquals(small(false).tokenEmbedding[0], h.getFloat()); // embedding comes first
    }

    @Test
    void truncatedFileIsRejected() throws IOException {
        Path file = dir.resolve("cut.bin");
        Llama2cCheckpointWriter.write(file, small(false));
        byte[] all = Files.readAllBytes(file);
        Files.write(file, java.util.Arrays.copyOf(all, all.length - 4));
        IOException e = assertThrows(IOException.class, () -> ReferenceEngine.load(file, null, 8));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        assertTrue(e.getMessage().contains(String.valueOf(all.length)), e.getMessage());

        Files.write(file, java.util.Arrays.copyOf(all, 10));
        e = assertThrows(IOException.class, () -> ReferenceEngine.load(file, null, 8));
        assertTrue(e.getMessage().contains("header"), e.getMessage());
    }

    @Test
    void malformedFilesAreRejected() throws IOException {
        Path file = dir.resolve("bad.bin");
        Llama2cCheckpointWriter.write(file, small(true));
        byte[] all = Files.readAllBytes(file);

        byte[] longer = java.util.Arrays.copyOf(all, all.length + 8);
        Files.write(file, longer);
        IOException e = assertThrows(IOException.class, () -> ReferenceEngine.load(file, null, 8));
        assertTrue(e.getMessage().contains("unexpected bytes"), e.getMessage());

        byte[] badHeader = all.clone();
        ByteBuffer.wrap(badHeader).order(ByteOrder.LITTLE_ENDIAN).putInt(3 * 4, 5); // 5 heads do not divide dim 16
        Files.write(file, badHeader);
        e = assertThrows(IOException.class, () -> ReferenceEngine.load(file, null, 8));
        assertTrue(e.getMessage().contains("malformed"), e.getMessage());

        byte[] newFormat = all.clone();
        ByteBuffer.wrap(newFormat).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 0x616b3432);
        Files.write(file, newFormat);
        e = assertThrows(IOException.class, () -> ReferenceEngine.load(file, null, 8));
        assertTrue(e.getMessage().contains("version 1"), e.getMessage());
    }

    @Test
    void bigVocabularyNeedsATokenizer() throws IOException {
        Path file = dir.resolve("v300.bin");
        Llama2cCheckpointWriter.write(file, ModelWeights.random(new ModelConfig(8, 16, 1, 2, 2, 300, 8, true), 1));
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> ReferenceEngine.load(file, null, 4));
        assertTrue(e.getMessage().contains("tokenizer"), e.getMessage());
    }
}
