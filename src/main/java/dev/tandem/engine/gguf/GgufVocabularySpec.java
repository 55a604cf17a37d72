package dev.tandem.engine.gguf;

import dev.tandem.engine.tokenizer.Llama2cTokenizer;
import dev.tandem.engine.tokenizer.TokenVocabulary.TokenType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A tokenizer as a GGUF file's {@code tokenizer.*} metadata states it, to write: a SentencePiece
 * vocabulary ({@code llama}: scores) or a byte-level BPE one ({@code gpt2}: merges and a pre-tokenizer
 * name), the token types, the special ids and the chat template.
 *
 * @param merges the BPE merges ("a b"), or null for SentencePiece
 * @param scores the SentencePiece scores, or null for BPE
 */
public record GgufVocabularySpec(
        String model,
        String pre,
        String[] tokens,
        float[] scores,
        TokenType[] types,
        String[] merges,
        int bos,
        int eos,
        boolean addBos,
        String chatTemplate) {

    public int size() {
        return tokens.length;
    }

    /**
     * llama2.c's {@code tokenizer.bin} (the Llama 2 SentencePiece vocabulary) as GGUF states it: spaces as
     * {@code ▁}, {@code <unk>}, {@code <s>} and {@code </s>} for its first three pieces, byte tokens typed BYTE.
     */
    public static GgufVocabularySpec fromLlama2c(Path tokenizerBin, String chatTemplate) throws IOException {
        return fromLlama2c(Llama2cTokenizer.load(tokenizerBin), chatTemplate);
    }

    /** A llama2.c vocabulary (its first three pieces the specials, then the 256 bytes) as GGUF states it. */
    public static GgufVocabularySpec fromLlama2c(Llama2cTokenizer t, String chatTemplate) {
        int n = t.vocabSize();
        String[] tokens = new String[n];
        float[] scores = new float[n];
        TokenType[] types = new TokenType[n];
        for (int i = 0; i < n; i++) {
            scores[i] = t.score(i);
            if (i >= 3 && i < 3 + 256) {
                tokens[i] = String.format("<0x%02X>", i - 3);
                types[i] = TokenType.BYTE;
            } else {
                tokens[i] = new String(t.piece(i), StandardCharsets.UTF_8).replace(' ', '\u2581');
                types[i] = TokenType.NORMAL;
            }
        }
        llamaSpecials(tokens, types);
        return new GgufVocabularySpec("llama", null, tokens, scores, types, null, 1, 2, true, chatTemplate);
    }

    /** A SentencePiece vocabulary of bytes only: every character is its UTF-8 bytes' tokens. */
    public static GgufVocabularySpec bytesOnly() {
        int n = 3 + 256;
        String[] tokens = new String[n];
        float[] scores = new float[n];
        TokenType[] types = new TokenType[n];
        llamaSpecials(tokens, types);
        for (int b = 0; b < 256; b++) {
            tokens[3 + b] = String.format("<0x%02X>", b);
            types[3 + b] = TokenType.BYTE;
        }
        return new GgufVocabularySpec("llama", null, tokens, scores, types, null, 1, 2, true, null);
    }

    /** Llama 2's three special tokens, first. */
    private static void llamaSpecials(String[] tokens, TokenType[] types) {
        tokens[0] = "<unk>";
        types[0] = TokenType.UNKNOWN;
        tokens[1] = "<s>";
        types[1] = TokenType.CONTROL;
        tokens[2] = "</s>";
        types[2] = TokenType.CONTROL;
    }

    /** Filled up to {@code size} tokens with unused ones (a random model of a real shape keeps its vocabulary size). */
    public GgufVocabularySpec paddedTo(int size) {
        if (size == tokens.length) {
            return this;
        }
        String[] t = Arrays.copyOf(tokens, size);
        TokenType[] ty = Arrays.copyOf(types, size);
        float[] sc = scores == null ? null : Arrays.copyOf(scores, size);
        for (int i = tokens.length; i < size; i++) {
            t[i] = "<unused" + (i - tokens.length) + ">";
            ty[i] = TokenType.UNUSED;
            if (sc != null) {
                sc[i] = -1e9f;
            }
        }
        return new GgufVocabularySpec(model, pre, t, sc, ty, merges, bos, eos, addBos, chatTemplate);
    }

    void writeTo(GgufWriter w) {
        w.put("tokenizer.ggml.model", GgufValue.string(model));
        if (pre != null) {
            w.put("tokenizer.ggml.pre", GgufValue.string(pre));
        }
        w.put("tokenizer.ggml.tokens", GgufValue.array(GgufValueType.STRING, tokens.clone()));
        if (scores != null) {
            w.put("tokenizer.ggml.scores", GgufValue.array(GgufValueType.FLOAT32, scores.clone()));
        }
        int[] typeIds = new int[types.length];
        for (int i = 0; i < types.length; i++) {
            typeIds[i] = types[i].ordinal();
        }
        w.put("tokenizer.ggml.token_type", GgufValue.array(GgufValueType.INT32, typeIds));
        if (merges != null) {
            w.put("tokenizer.ggml.merges", GgufValue.array(GgufValueType.STRING, merges.clone()));
        }
        w.put("tokenizer.ggml.bos_token_id", GgufValue.uint32(bos));
        w.put("tokenizer.ggml.eos_token_id", GgufValue.uint32(eos));
        w.put("tokenizer.ggml.add_bos_token", GgufValue.bool(addBos));
        w.put("tokenizer.ggml.add_eos_token", GgufValue.bool(false));
        if (chatTemplate != null) {
            w.put("tokenizer.chat_template", GgufValue.string(chatTemplate));
        }
    }
}
