package dev.tandem.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Against the real Llama 2 vocabulary. Expected ids were worked out by following run.c's encode
 * step by step (an independent few-line Python transcription of it).
 */
class Llama2cTokenizerTest {
    /**
     * shared/ sits beside the project checkout (the Maven basedir is the working directory); the
     * {@code tandem.shared} system property points elsewhere.
     */
    static final Path TOKENIZER =
            Path.of(System.getProperty("tandem.shared", "../shared"), "data", "llama2c", "tokenizer.bin");

    private static Llama2cTokenizer tok;

    @BeforeAll
    static void load() throws IOException {
        Assumptions.assumeTrue(Files.isRegularFile(TOKENIZER), "no " + TOKENIZER.toAbsolutePath());
        tok = Llama2cTokenizer.load(TOKENIZER);
    }

    static Stream<Arguments> encodings() {
        return Stream.of(
                Arguments.of("Hello world", new int[] {1, 15043, 3186}),
                Arguments.of("Once upon a time", new int[] {1, 9038, 2501, 263, 931}),
                Arguments.of("", new int[] {1}), // no dummy prefix for empty text
                Arguments.of("a", new int[] {1, 263}),
                Arguments.of("  two  spaces", new int[] {1, 259, 1023, 29871, 8162}),
                Arguments.of("tab\tand\nnewline", new int[] {1, 4434, 12, 392, 13, 1482, 1220}),
                Arguments.of("héllo wörld", new int[] {1, 298, 3610, 417, 281, 1340, 430}),
                Arguments.of("你好，世界", new int[] {1, 29871, 30919, 31076, 30214, 30793, 30967}),
                // 🦙 (F0 9F A6 99) is not in the vocabulary: byte fallback, byte + 3
                Arguments.of("🦙 llama", new int[] {1, 29871, 243, 162, 169, 156, 11148, 3304}),
                Arguments.of("ǅ", new int[] {1, 29871, 202, 136}));
    }

    @ParameterizedTest
    @MethodSource("encodings")
    void encodesLikeRunC(String text, int[] expected) {
        assertArrayEquals(expected, tok.encode(text, true));
        int[] noBos = tok.encode(text, false);
        assertArrayEquals(java.util.Arrays.copyOfRange(expected, 1, expected.length), noBos);
    }

    @ParameterizedTest
    @MethodSource("encodings")
    void decodeRoundTrips(String text, int[] ids) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = 1; i < ids.length; i++) {
            bytes.writeBytes(tok.decode(ids[i - 1], ids[i]));
        }
        assertEquals(text, TextStreamDecoder.decodeAll(bytes.toByteArray()));
    }

    @Test
    void decodeRules() {
        assertArrayEquals("Hello".getBytes(), tok.decode(1, 15043)); // leading space dropped after BOS
        assertArrayEquals(" Hello".getBytes(), tok.decode(3186, 15043));
        assertArrayEquals(new byte[] {(byte) 0xF0}, tok.decode(5, 243)); // <0xF0>
        assertArrayEquals(new byte[] {'\n'}, tok.decode(1, 13)); // <0x0A>
        assertArrayEquals(new byte[0], tok.decode(5, 0));
        assertArrayEquals(new byte[0], tok.decode(5, 1));
        assertArrayEquals(new byte[0], tok.decode(5, 2));
        assertThrows(IllegalArgumentException.class, () -> tok.decode(1, 32000));
    }

    @Test
    void specialTokensAndShape() {
        assertEquals(32000, tok.vocabSize());
        assertEquals(1, tok.bos());
        assertEquals(2, tok.eos());
        assertTrue(tok.isEndOfSequence(1));
        assertTrue(tok.isEndOfSequence(2));
        assertFalse(tok.isEndOfSequence(13));
        assertEquals(27, tok.maxTokenLength());
        assertEquals(15043, tok.lookup(" Hello".getBytes()));
    }

    @Test
    void longTextEncodesQuickly() {
        String text = "The quick brown fox jumps over the lazy dog. ".repeat(200);
        long t0 = System.nanoTime();
        int[] ids = tok.encode(text, true);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < 5000, "encoding 9 kB took " + ms + " ms");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = 1; i < ids.length; i++) {
            bytes.writeBytes(tok.decode(ids[i - 1], ids[i]));
        }
        assertEquals(text, TextStreamDecoder.decodeAll(bytes.toByteArray()));
    }

    @Test
    void truncatedFileIsRejected(@TempDir Path dir) throws IOException {
        Path cut = dir.resolve("cut.bin");
        byte[] all = Files.readAllBytes(TOKENIZER);
        Files.write(cut, java.util.Arrays.copyOf(all, all.length / 2));
        IOException e = assertThrows(IOException.class, () -> Llama2cTokenizer.load(cut, 32000));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        // loading the first n records only, as run.c does for a smaller model vocabulary
        assertEquals(512, Llama2cTokenizer.load(cut, 512).vocabSize());
    }
}
