package dev.tandem.engine.gguf;

import dev.tandem.engine.tokenizer.BpePreTokenizer;
import dev.tandem.engine.tokenizer.GgufBpeTokenizer;
import dev.tandem.engine.tokenizer.SpmTokenizer;
import dev.tandem.engine.tokenizer.TokenVocabulary;
import dev.tandem.engine.tokenizer.TokenVocabulary.TokenType;
import dev.tandem.engine.tokenizer.Tokenizer;

/** The tokenizer a GGUF file's {@code tokenizer.ggml.*} metadata describes. */
public final class GgufTokenizers {
    private GgufTokenizers() {}

    public static Tokenizer of(GgufMetadata m) {
        String model = m.string("tokenizer.ggml.model");
        return switch (model) {
            case "llama" ->
                new SpmTokenizer(
                        vocabulary(m, true),
                        m.floats("tokenizer.ggml.scores"),
                        m.bool("tokenizer.ggml.add_space_prefix", true));
            case "gpt2" -> {
                BpePreTokenizer pre = preTokenizer(m.string("tokenizer.ggml.pre", "default"));
                // llama.cpp adds BOS by default for Llama 3's pre-tokenizer only; the file's key overrides.
                yield new GgufBpeTokenizer(vocabulary(m, pre.ignoreMerges()), m.strings("tokenizer.ggml.merges"), pre);
            }
            default ->
                throw new GgufFormatException("tokenizer.ggml.model '" + model + "' is not supported (llama, gpt2)");
        };
    }

    private static BpePreTokenizer preTokenizer(String name) {
        try {
            return BpePreTokenizer.named(name);
        } catch (IllegalArgumentException e) {
            throw new GgufFormatException("tokenizer.ggml.pre: " + e.getMessage(), e);
        }
    }

    /** The tokens, their types and special ids; {@code addBosDefault} where the file does not say. */
    static TokenVocabulary vocabulary(GgufMetadata m, boolean addBosDefault) {
        String[] tokens = m.strings("tokenizer.ggml.tokens");
        TokenType[] types = new TokenType[tokens.length];
        long[] typeIds = m.has("tokenizer.ggml.token_type") ? m.integers("tokenizer.ggml.token_type") : null;
        if (typeIds != null && typeIds.length != tokens.length) {
            throw new GgufFormatException(
                    typeIds.length + " token types for " + tokens.length + " tokens in tokenizer.ggml.token_type");
        }
        for (int i = 0; i < tokens.length; i++) {
            types[i] = typeIds == null ? TokenType.NORMAL : TokenType.of(typeIds[i]);
        }
        try {
            return new TokenVocabulary(
                    tokens,
                    types,
                    (int) m.integer("tokenizer.ggml.bos_token_id", -1),
                    (int) m.integer("tokenizer.ggml.eos_token_id", -1),
                    (int) m.integer("tokenizer.ggml.eot_token_id", -1),
                    m.bool("tokenizer.ggml.add_bos_token", addBosDefault));
        } catch (IllegalArgumentException e) {
            throw new GgufFormatException("the GGUF vocabulary: " + e.getMessage(), e);
        }
    }
}
