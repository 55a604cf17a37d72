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
        return Stream.of(ByteTokenizer.INSTANCE, TestTokenizers.llama2c(), ggufSpm(), ggufBpe());
    }

    /** A GGUF SentencePiece vocabulary: llama2.c's pieces with ▁ for spaces, its specials typed. */
    static SpmTokenizer ggufSpm() {
        Llama2cTokenizer t = TestTokenizers.llama2c();
        int n = t.vocabSize();
        String[] texts = new String[n];
        TokenVocabulary.TokenType[] types = new TokenVocabulary.TokenType[n];
        float[] scores = new float[n];
        for (int i = 0; i < n; i++) {
            scores[i] = t.score(i);
            boolean isByte = i >= 3 && i < 259;
            texts[i] = isByte
                    ? String.format("<0x%02X>", i - 3)
                    : new String(t.piece(i), StandardCharsets.UTF_8).replace(' ', '\u2581');
            types[i] = isByte ? TokenVocabulary.TokenType.BYTE : TokenVocabulary.TokenType.NORMAL;
        }
        texts[0] = "<unk>";
        texts[1] = "<s>";
        texts[2] = "</s>";
        types[0] = TokenVocabulary.TokenType.UNKNOWN;
        types[1] = TokenVocabulary.TokenType.CONTROL;
        types[2] = TokenVocabulary.TokenType.CONTROL;
        return new SpmTokenizer(new TokenVocabulary(texts, types, 1, 2, -1, true), scores, true);
    }

    /** A GGUF byte-level BPE vocabulary: the 256 byte symbols, a few merges, ChatML's specials. */
    static GgufBpeTokenizer ggufBpe() {
        java.util.List<String> texts = new java.util.ArrayList<>();
        for (int b = 0; b < 256; b++) {
            texts.add(ByteLevelAlphabet.spell(new byte[] {(byte) b}, 0, 1));
        }
        String[] merges = {"t h", "th e", "Ġ th", "Ġth e", "o n", "Ġ on", "Ġon ce"};
        for (String m : merges) {
            texts.add(m.replace(" ", ""));
        }
        texts.add("<|im_start|>");
        texts.add("<|im_end|>");
        TokenVocabulary.TokenType[] types = new TokenVocabulary.TokenType[texts.size()];
        java.util.Arrays.fill(types, TokenVocabulary.TokenType.NORMAL);
        types[texts.size() - 2] = TokenVocabulary.TokenType.CONTROL;
        types[texts.size() - 1] = TokenVocabulary.TokenType.CONTROL;
        TokenVocabulary vocab =
                new TokenVocabulary(texts.toArray(String[]::new), types, -1, texts.size() - 1, -1, false);
        return new GgufBpeTokenizer(vocab, merges, BpePreTokenizer.named("qwen2"));
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
        byte[] spm = TokenizerImages.of(ggufSpm());
        byte[] bpe = TokenizerImages.of(ggufBpe());
        return Stream.of(
                Arrays.copyOf(spm, spm.length - 1),
                Arrays.copyOf(bpe, bpe.length / 2),
                "TTK1 spm\n".getBytes(StandardCharsets.US_ASCII),
                "TTK1 bpe\n\0\0\0\0".getBytes(StandardCharsets.US_ASCII),
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
