package dev.tandem.engine.gguf;

import dev.tandem.engine.tokenizer.ByteLevelAlphabet;
import dev.tandem.engine.tokenizer.TokenVocabulary.TokenType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The vocabularies the oracle tests write into GGUF files, by name: llama2.c's SentencePiece vocabulary
 * (from shared/, when there), the tests' own small SentencePiece vocabulary,
 * or a byte-level BPE vocabulary learned here from the project's docs (1,500 merges) with the special
 * tokens of ChatML and Llama 3, under a given pre-tokenizer name ({@code bpe-<pre>}).
 */
public final class TestVocabularies {
    /** shared/ beside the checkout, as Llama2cTokenizerTest finds it; tests that need it skip without it. */
    static final Path LLAMA2_TOKENIZER =
            Path.of(System.getProperty("tandem.shared", "../shared"), "data", "llama2c", "tokenizer.bin");

    private static final int MERGES = 1500;
    private static final String[] SPECIALS = {
        "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|begin_of_text|>", "<|eot_id|>"
    };

    private TestVocabularies() {}

    public static GgufVocabularySpec named(String name) throws IOException {
        if (name.equals("spm-llama2")) {
            org.junit.jupiter.api.Assumptions.assumeTrue(
                    Files.isRegularFile(LLAMA2_TOKENIZER), "no " + LLAMA2_TOKENIZER.toAbsolutePath());
            return GgufVocabularySpec.fromLlama2c(LLAMA2_TOKENIZER, null);
        }
        if (name.equals("spm-test")) {
            return unique(GgufVocabularySpec.fromLlama2c(dev.tandem.engine.tokenizer.TestTokenizers.llama2c(), null));
        }
        if (name.startsWith("bpe-")) {
            return byteLevelBpe(name.substring(4));
        }
        throw new IllegalArgumentException(name);
    }

    /**
     * The test vocabulary repeats {@code <s>} and {@code </s>} as ordinary pieces; llama.cpp refuses a
     * vocabulary with a text twice, so the repeats become unused tokens of their own.
     */
    private static GgufVocabularySpec unique(GgufVocabularySpec v) {
        String[] tokens = v.tokens().clone();
        TokenType[] types = v.types().clone();
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < tokens.length; i++) {
            if (!seen.add(tokens[i])) {
                tokens[i] = "<repeat" + i + ">";
                types[i] = TokenType.UNUSED;
            }
        }
        return new GgufVocabularySpec(
                v.model(),
                v.pre(),
                tokens,
                v.scores(),
                types,
                v.merges(),
                v.bos(),
                v.eos(),
                v.addBos(),
                v.chatTemplate());
    }

    /** A tiny model around the vocabulary: tokenizer tests need a loadable file, not a real width. */
    static ModelShape shapeFor(String name) {
        return new ModelShape("tiny", "llama", 64, 128, 1, 2, 2, 32000, 512, 10000f, 1e-5f, true, false);
    }

    private static List<String> learnedTokens;
    private static List<String> learnedMerges;

    /** Byte-level BPE learned from the docs (once per JVM): GPT-2's 256 byte symbols, then frequent pairs merged. */
    static synchronized GgufVocabularySpec byteLevelBpe(String pre) throws IOException {
        if (learnedTokens == null) {
            learn();
        }
        List<String> tokens = new ArrayList<>(learnedTokens);
        List<TokenType> types = new ArrayList<>(java.util.Collections.nCopies(tokens.size(), TokenType.NORMAL));
        for (String s : SPECIALS) {
            tokens.add(s);
            types.add(TokenType.CONTROL);
        }
        tokens.add("<tool_call>");
        types.add(TokenType.USER_DEFINED);
        int eot = tokens.indexOf("<|endoftext|>");
        return new GgufVocabularySpec(
                "gpt2",
                pre,
                tokens.toArray(String[]::new),
                null,
                types.toArray(TokenType[]::new),
                learnedMerges.toArray(String[]::new),
                eot,
                eot,
                false,
                null);
    }

    /** Words (space-led, as GPT-2 splits) as symbol ids; each round merges the most frequent adjacent pair. */
    private static void learn() throws IOException {
        Map<String, Integer> words = new HashMap<>();
        try (var docs = Files.list(Path.of("src/site/markdown"))) {
            for (Path p : docs.sorted().toList()) {
                for (String w : Files.readString(p).split("(?= )|\n")) {
                    if (!w.isEmpty()) {
                        words.merge(w, 1, Integer::sum);
                    }
                }
            }
        }
        List<String> tokens = new ArrayList<>();
        for (int b = 0; b < 256; b++) {
            tokens.add(ByteLevelAlphabet.spell(new byte[] {(byte) b}, 0, 1));
        }
        List<int[]> symbols = new ArrayList<>();
        List<Integer> counts = new ArrayList<>();
        words.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
            byte[] b = e.getKey().getBytes(StandardCharsets.UTF_8);
            int[] ids = new int[b.length];
            for (int i = 0; i < b.length; i++) {
                ids[i] = b[i] & 0xFF;
            }
            symbols.add(ids);
            counts.add(e.getValue());
        });
        List<String> merges = new ArrayList<>();
        while (merges.size() < MERGES) {
            Map<Long, Integer> pairs = new HashMap<>();
            for (int w = 0; w < symbols.size(); w++) {
                int[] s = symbols.get(w);
                for (int i = 0; i + 1 < s.length; i++) {
                    pairs.merge((long) s[i] << 32 | s[i + 1], counts.get(w), Integer::sum);
                }
            }
            long best = -1;
            int bestCount = 0;
            for (Map.Entry<Long, Integer> e : pairs.entrySet()) {
                if (e.getValue() > bestCount || (e.getValue() == bestCount && e.getKey() < best)) {
                    best = e.getKey();
                    bestCount = e.getValue();
                }
            }
            if (best < 0) {
                break;
            }
            int left = (int) (best >>> 32);
            int right = (int) best;
            int merged = tokens.size();
            merges.add(tokens.get(left) + " " + tokens.get(right));
            tokens.add(tokens.get(left) + tokens.get(right));
            for (int w = 0; w < symbols.size(); w++) {
                symbols.set(w, mergeAll(symbols.get(w), left, right, merged));
            }
        }
        learnedTokens = tokens;
        learnedMerges = merges;
    }

    private static int[] mergeAll(int[] s, int left, int right, int merged) {
        int[] out = new int[s.length];
        int n = 0;
        for (int i = 0; i < s.length; i++) {
            if (i + 1 < s.length && s[i] == left && s[i + 1] == right) {
                out[n++] = merged;
                i++;
            } else {
                out[n++] = s[i];
            }
        }
        return n == s.length ? s : java.util.Arrays.copyOf(out, n);
    }
}
