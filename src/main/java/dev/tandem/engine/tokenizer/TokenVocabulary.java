package dev.tandem.engine.tokenizer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A GGUF vocabulary's token texts and types with the ids of its special tokens, and the first step of
 * llama.cpp's tokenization for both tokenizer kinds: cutting the text at special tokens (control,
 * user-defined and unknown tokens, the longest first, each occurrence from the left).
 */
public final class TokenVocabulary {
    /** {@code tokenizer.ggml.token_type}'s values (llama.cpp's {@code llama_token_type}). */
    public enum TokenType {
        UNDEFINED,
        NORMAL,
        UNKNOWN,
        CONTROL,
        USER_DEFINED,
        UNUSED,
        BYTE;

        public static TokenType of(long value) {
            return value >= 0 && value < values().length ? values()[(int) value] : UNDEFINED;
        }
    }

    /** Texts that end a turn in the chat formats llama.cpp knows (its end-of-generation set). */
    private static final List<String> END_TEXTS = List.of(
            "<|eot_id|>",
            "<|im_end|>",
            "<|end|>",
            "<end_of_turn>",
            "<|endoftext|>",
            "<|eom_id|>",
            "<EOT>",
            "<|end_of_text|>");

    /** A piece of text to tokenize ({@code token} −1) or a special token found in it. */
    public record Fragment(String text, int token) {}

    private final String[] texts;
    private final TokenType[] types;
    private final Map<String, Integer> ids;
    private final int bos;
    private final int eos;
    private final int eot;
    private final boolean addBos;
    private final Set<Integer> endOfGeneration;
    private final int[] specials; // longest text first

    /**
     * @param bos the BOS token, or −1; @param eos the EOS token, or −1; @param eot the end-of-turn token, or −1
     */
    public TokenVocabulary(String[] texts, TokenType[] types, int bos, int eos, int eot, boolean addBos) {
        if (texts.length != types.length) {
            throw new IllegalArgumentException(texts.length + " token texts, " + types.length + " token types");
        }
        this.texts = texts.clone();
        this.types = types.clone();
        this.ids = new HashMap<>(texts.length * 2);
        for (int i = 0; i < texts.length; i++) {
            ids.put(texts[i], i); // llama.cpp's map: the last of a repeated text wins
        }
        this.bos = checkOptional(bos, "BOS");
        this.eos = checkOptional(eos, "EOS");
        this.eot = eot;
        this.addBos = addBos;
        Set<Integer> end = new HashSet<>();
        for (int t : new int[] {eos, checkOptional(eot, "EOT")}) {
            if (t >= 0) {
                end.add(t);
            }
        }
        for (String text : END_TEXTS) {
            Integer id = ids.get(text);
            if (id != null && types[id] == TokenType.CONTROL) {
                end.add(id);
            }
        }
        this.endOfGeneration = Set.copyOf(end);
        List<Integer> special = new ArrayList<>();
        for (int i = 0; i < texts.length; i++) {
            TokenType t = types[i];
            if ((t == TokenType.CONTROL || t == TokenType.USER_DEFINED || t == TokenType.UNKNOWN)
                    && !texts[i].isEmpty()) {
                special.add(i);
            }
        }
        special.sort(Comparator.comparingInt((Integer i) -> -texts[i].length()));
        this.specials = special.stream().mapToInt(Integer::intValue).toArray();
    }

    private int checkOptional(int token, String what) {
        if (token >= texts.length) {
            throw new IllegalArgumentException(
                    what + " token " + token + " is outside the vocabulary of " + texts.length);
        }
        return token;
    }

    /**
     * The text cut at special tokens, in llama.cpp's order: each special token (longest first) is found
     * in what is still raw text, every occurrence from the left. Empty raw pieces are dropped.
     */
    public List<Fragment> splitSpecial(String text) {
        List<Fragment> fragments = new ArrayList<>();
        fragments.add(new Fragment(text, -1));
        for (int id : specials) {
            String s = texts[id];
            List<Fragment> next = new ArrayList<>(fragments.size() + 2);
            for (Fragment f : fragments) {
                if (f.token() >= 0 || !f.text().contains(s)) {
                    next.add(f);
                    continue;
                }
                int from = 0;
                for (int at = f.text().indexOf(s); at >= 0; at = f.text().indexOf(s, from)) {
                    if (at > from) {
                        next.add(new Fragment(f.text().substring(from, at), -1));
                    }
                    next.add(new Fragment(s, id));
                    from = at + s.length();
                }
                if (from < f.text().length()) {
                    next.add(new Fragment(f.text().substring(from), -1));
                }
            }
            fragments = next;
        }
        fragments.removeIf(f -> f.token() < 0 && f.text().isEmpty());
        return fragments;
    }

    public int size() {
        return texts.length;
    }

    public String text(int id) {
        return texts[check(id)];
    }

    public TokenType type(int id) {
        return types[check(id)];
    }

    /** The token whose text is {@code text}, or −1. */
    public int id(String text) {
        Integer id = ids.get(text);
        return id == null ? -1 : id;
    }

    public int bos() {
        return bos;
    }

    public int eos() {
        return eos;
    }

    public boolean addBos() {
        return addBos;
    }

    public Set<Integer> endOfGeneration() {
        return endOfGeneration;
    }

    /** The vocabulary as bytes, for {@link TokenizerImages}; {@link #read} gives an equal one back. */
    void write(java.io.DataOutputStream out) throws java.io.IOException {
        out.writeInt(texts.length);
        for (int i = 0; i < texts.length; i++) {
            out.writeUTF(texts[i]);
            out.writeByte(types[i].ordinal());
        }
        out.writeInt(bos);
        out.writeInt(eos);
        out.writeInt(eot);
        out.writeBoolean(addBos);
    }

    static TokenVocabulary read(java.io.DataInputStream in) throws java.io.IOException {
        int n = in.readInt();
        if (n <= 0 || n > 1 << 24) {
            throw new java.io.IOException("a vocabulary of " + n + " tokens");
        }
        String[] texts = new String[n];
        TokenType[] types = new TokenType[n];
        for (int i = 0; i < n; i++) {
            texts[i] = in.readUTF();
            types[i] = TokenType.of(in.readByte());
        }
        try {
            return new TokenVocabulary(texts, types, in.readInt(), in.readInt(), in.readInt(), in.readBoolean());
        } catch (IllegalArgumentException e) {
            throw new java.io.IOException(e.getMessage(), e);
        }
    }

    int check(int token) {
        if (token < 0 || token >= texts.length) {
            throw new IllegalArgumentException("token " + token + " outside vocabulary [0, " + texts.length + ")");
        }
        return token;
    }

    /** Texts (a String each and its map entry), types and the special list. */
    public long footprintBytes() {
        long bytes = 0;
        for (String t : texts) {
            bytes += 40 + 2L * t.length() + 64 + 8;
        }
        return bytes + 4L * specials.length;
    }

    @Override
    public String toString() {
        return texts.length + " tokens, " + specials.length + " special, BOS " + bos + ", EOS " + eos + ", end "
                + Arrays.toString(endOfGeneration.toArray());
    }
}
