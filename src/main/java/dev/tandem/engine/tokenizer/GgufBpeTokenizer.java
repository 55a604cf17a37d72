package dev.tandem.engine.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A byte-level BPE vocabulary as llama.cpp tokenizes it ({@code tokenizer.ggml.model = gpt2}): the text
 * is cut at special tokens, each raw piece is split into words by the pre-tokenizer the file names
 * ({@code tokenizer.ggml.pre}), each word's bytes are spelled in GPT-2's byte alphabet and merged by
 * rank (the lowest first, the leftmost on ties). With Llama 3's pre-tokenizer a word that is itself a
 * token is taken whole ({@code ignore_merges}).
 */
public final class GgufBpeTokenizer extends VocabularyTokenizer {
    private final BpePreTokenizer pre;
    private final BpeMerges merges;
    private final int[] byteTokens = new int[256];

    /** {@code merges}: "left right" in rank order (GGUF's {@code tokenizer.ggml.merges}). */
    public GgufBpeTokenizer(TokenVocabulary vocab, String[] merges, BpePreTokenizer pre) {
        super(vocab);
        this.pre = pre;
        int[] left = new int[merges.length];
        int[] right = new int[merges.length];
        int[] merged = new int[merges.length];
        int n = 0;
        for (String m : merges) {
            int space = m.indexOf(' ', 1);
            if (space < 0) {
                throw new IllegalArgumentException("a BPE merge is two tokens and a space: '" + m + "'");
            }
            int a = vocab.id(m.substring(0, space));
            int b = vocab.id(m.substring(space + 1));
            int ab = vocab.id(m.substring(0, space) + m.substring(space + 1));
            if (a >= 0 && b >= 0 && ab >= 0) { // a merge into no token can never give one: skip it
                left[n] = a;
                right[n] = b;
                merged[n++] = ab;
            }
        }
        this.merges = new BpeMerges(
                java.util.Arrays.copyOf(left, n),
                java.util.Arrays.copyOf(right, n),
                java.util.Arrays.copyOf(merged, n));
        for (int b = 0; b < 256; b++) {
            byteTokens[b] = vocab.id(ByteLevelAlphabet.spell(new byte[] {(byte) b}, 0, 1));
        }
    }

    /** What llama.cpp's {@code token_to_piece} gives without specials: byte-level text decoded, user-defined as is. */
    @Override
    byte[] piece(TokenVocabulary vocab, int id) {
        String text = vocab.text(id);
        return switch (vocab.type(id)) {
            case NORMAL -> {
                byte[] b = ByteLevelAlphabet.bytes(text);
                yield b != null ? b : text.getBytes(StandardCharsets.UTF_8);
            }
            case USER_DEFINED -> text.getBytes(StandardCharsets.UTF_8);
            default -> new byte[0];
        };
    }

    @Override
    void encodeRaw(String text, boolean afterSpecial, List<Integer> out) {
        for (String word : pre.split(text)) {
            encodeWord(word.getBytes(StandardCharsets.UTF_8), out);
        }
    }

    private void encodeWord(byte[] bytes, List<Integer> out) {
        if (pre.ignoreMerges()) {
            int whole = vocab.id(ByteLevelAlphabet.spell(bytes, 0, bytes.length));
            if (whole >= 0) {
                out.add(whole);
                return;
            }
        }
        int[] symbols = new int[bytes.length];
        int n = 0;
        for (byte b : bytes) {
            int id = byteTokens[b & 0xFF];
            if (id < 0) {
                throw new IllegalStateException("the vocabulary has no token for the byte " + (b & 0xFF));
            }
            symbols[n++] = id;
        }
        n = merges.merge(symbols, n);
        for (int i = 0; i < n; i++) {
            out.add(symbols[i]);
        }
    }

    /** The vocabulary, pre-tokenizer and merges (as id pairs) as bytes, for {@link TokenizerImages}. */
    byte[] image() throws java.io.IOException {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        java.io.DataOutputStream out = new java.io.DataOutputStream(bytes);
        vocab.write(out);
        out.writeUTF(pre.name());
        long[] pairs = merges.pairsByRank();
        out.writeInt(pairs.length);
        for (long pair : pairs) {
            out.writeLong(pair);
        }
        out.flush();
        return bytes.toByteArray();
    }

    static GgufBpeTokenizer readImage(java.io.DataInputStream in) throws java.io.IOException {
        TokenVocabulary vocab = TokenVocabulary.read(in);
        BpePreTokenizer pre;
        try {
            pre = BpePreTokenizer.named(in.readUTF());
        } catch (IllegalArgumentException e) {
            throw new java.io.IOException(e.getMessage(), e);
        }
        int n = in.readInt();
        if (n < 0 || n > 1 << 24) {
            throw new java.io.IOException(n + " merges");
        }
        List<String> merges = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long pair = in.readLong();
            int left = (int) (pair >>> 32);
            int right = (int) pair;
            if (pair != -1L && left >= 0 && left < vocab.size() && right >= 0 && right < vocab.size()) {
                merges.add(vocab.text(left) + " " + vocab.text(right));
            }
        }
        return new GgufBpeTokenizer(vocab, merges.toArray(String[]::new), pre);
    }

    @Override
    public long footprintBytes() {
        return super.footprintBytes() + merges.footprintBytes();
    }
}
