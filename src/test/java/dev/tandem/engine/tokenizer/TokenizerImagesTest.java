package dev.tandem.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** A tokenizer image reads back as the same vocabulary; anything else is refused, never half-read. */
class TokenizerImagesTest {

    static Stream<Tokenizer> tokenizers() {
        return Stream.of(ByteTokenizer.INSTANCE, TestTokenizers.llama2c());
    }

    @ParameterizedTest
    @MethodSource("tokenizers")
    void anImageReadsBackAsTheSameVocabulary(Tokenizer original) throws IOException {
        Tokenizer copy = TokenizerImages.read(TokenizerImages.of(original));
        assertEquals(TokenizerIdentity.of(original), TokenizerIdentity.of(copy));
        assertEquals(original.vocabSize(), copy.vocabSize());
        assertEquals(original.maxTokenBytes(), copy.maxTokenBytes());
        String text = "[INST] Once upon a time, the three bears went walking in the woods. [/INST] Ünïcödé ☃";
        assertArrayEquals(original.encode(text, true), copy.encode(text, true));
        for (int t = 0; t < original.vocabSize(); t++) {
            assertArrayEquals(original.decode(original.bos(), t), copy.decode(copy.bos(), t), "token " + t);
            assertEquals(original.isEndOfSequence(t), copy.isEndOfSequence(t), "token " + t);
        }
        assertArrayEquals(TokenizerImages.of(original), TokenizerImages.of(copy));
    }

    @Test
    void theByteTokenizerIsOneInstance() throws IOException {
        assertSame(ByteTokenizer.INSTANCE, TokenizerImages.read(TokenizerImages.of(ByteTokenizer.INSTANCE)));
    }

    @Test
    void theTestVocabularyMergesAndDiffersFromTheBuiltIn() {
        Tokenizer t = TestTokenizers.llama2c();
        int[] ids = t.encode("the end", true);
        assertTrue(ids.length < "the end".length(), "merges shorten the text: " + Arrays.toString(ids));
        assertNotEquals(TokenizerIdentity.of(ByteTokenizer.INSTANCE), TokenizerIdentity.of(t));
    }

    static Stream<byte[]> malformed() {
        byte[] good = TokenizerImages.of(TestTokenizers.llama2c());
        return Stream.of(
                new byte[0],
                "TTK1 byte\nextra".getBytes(StandardCharsets.US_ASCII),
                "TTK1 sentencepiece\n".getBytes(StandardCharsets.US_ASCII),
                Arrays.copyOf(good, 40),
                Arrays.copyOf(good, good.length - 3),
                "TTK1 llama2c\n".getBytes(StandardCharsets.US_ASCII));
    }

    @ParameterizedTest
    @MethodSource("malformed")
    void aMalformedImageIsRefused(byte[] image) {
        assertThrows(IOException.class, () -> TokenizerImages.read(image));
    }

    @Test
    void aTokenizerWithoutAnImageFormatIsSaidSo() {
        Tokenizer wrapped = new Tokenizer() {
            public int vocabSize() {
                return 1;
            }

            public int bos() {
                return 0;
            }

            public int eos() {
                return 0;
            }

            public int[] encode(String text, boolean addBos) {
                return new int[0];
            }

            public byte[] decode(int previousToken, int token) {
                return new byte[0];
            }

            public int maxTokenBytes() {
                return 1;
            }

            public boolean isEndOfSequence(int token) {
                return true;
            }
        };
        assertThrows(IllegalArgumentException.class, () -> TokenizerImages.of(wrapped));
    }
}
