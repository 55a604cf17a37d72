package dev.tandem.engine.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * A SentencePiece vocabulary as llama.cpp tokenizes it ({@code tokenizer.ggml.model = llama}): the text
 * is cut at special tokens, each raw piece gets a space prefix when it starts the text or follows a
 * special token, spaces become {@code ▁}, every UTF-8 character starts as a symbol, and adjacent symbols
 * merge while their concatenation is a token — the best-scoring pair first, the leftmost on ties.
 * Symbols that are no token fall back to their bytes' {@code <0xXX>} tokens.
 */
public final class SpmTokenizer extends VocabularyTokenizer {
    private static final String SPACE = "\u2581";

    private final float[] scores;
    private final boolean addSpacePrefix;
    private final int[] byteTokens = new int[256];

    public SpmTokenizer(TokenVocabulary vocab, float[] scores, boolean addSpacePrefix) {
        super(vocab);
        this.scores = scores.clone();
        this.addSpacePrefix = addSpacePrefix;
        for (int b = 0; b < 256; b++) {
            byteTokens[b] = vocab.id(String.format("<0x%02X>", b));
        }
    }

    @Override
    byte[] piece(TokenVocabulary vocab, int id) {
        String text = vocab.text(id);
        return switch (vocab.type(id)) {
            case NORMAL, USER_DEFINED -> text.replace(SPACE, " ").getBytes(StandardCharsets.UTF_8);
            case UNKNOWN -> "\u2585".getBytes(StandardCharsets.UTF_8);
            case BYTE -> new byte[] {(byte) Integer.parseInt(text.substring(3, 5), 16)};
            default -> new byte[0];
        };
    }

    @Override
    void encodeRaw(String text, boolean afterSpecial, List<Integer> out) {
        String raw = (addSpacePrefix && afterSpecial ? " " : "") + text;
        tokenize(raw.replace(" ", SPACE), out);
    }

    /** One merge candidate: the symbols {@code left} and {@code right}, {@code size} bytes together. */
    private record Bigram(int left, int right, float score, int size) {}

    private void tokenize(String text, List<Integer> out) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int n = 0;
        int[] start = new int[bytes.length];
        int[] len = new int[bytes.length];
        for (int at = 0; at < bytes.length; n++) {
            start[n] = at;
            len[n] = Math.min(bytes.length - at, utf8Length(bytes[at]));
            at += len[n];
        }
        int[] prev = new int[n];
        int[] next = new int[n];
        for (int i = 0; i < n; i++) {
            prev[i] = i - 1;
            next[i] = i + 1 < n ? i + 1 : -1;
        }
        PriorityQueue<Bigram> queue = new PriorityQueue<>((a, b) ->
                a.score() != b.score() ? Float.compare(b.score(), a.score()) : Integer.compare(a.left(), b.left()));
        Map<String, int[]> merges = new HashMap<>();
        for (int i = 1; i < n; i++) {
            addBigram(bytes, start, len, i - 1, i, queue, merges);
        }
        while (!queue.isEmpty()) {
            Bigram b = queue.poll();
            if (len[b.left()] == 0 || len[b.right()] == 0 || len[b.left()] + len[b.right()] != b.size()) {
                continue; // one side merged since
            }
            len[b.left()] += len[b.right()];
            len[b.right()] = 0;
            next[b.left()] = next[b.right()];
            if (next[b.right()] >= 0) {
                prev[next[b.right()]] = b.left();
            }
            addBigram(bytes, start, len, prev[b.left()], b.left(), queue, merges);
            addBigram(bytes, start, len, b.left(), next[b.left()], queue, merges);
        }
        for (int i = n > 0 ? 0 : -1; i != -1; i = next[i]) {
            resegment(bytes, start[i], len[i], merges, start, len, out);
        }
    }

    private void addBigram(
            byte[] bytes,
            int[] start,
            int[] len,
            int left,
            int right,
            PriorityQueue<Bigram> queue,
            Map<String, int[]> merges) {
        if (left < 0 || right < 0) {
            return;
        }
        int size = len[left] + len[right];
        String text = new String(bytes, start[left], size, StandardCharsets.UTF_8);
        int token = vocab.id(text);
        if (token < 0) {
            return;
        }
        queue.add(new Bigram(left, right, scores[token], size));
        merges.put(text, new int[] {left, right, len[left], len[right]});
    }

    /** A final symbol as its token, or split back along the merge that made it, or as bytes. */
    private void resegment(
            byte[] bytes, int at, int size, Map<String, int[]> merges, int[] start, int[] len, List<Integer> out) {
        String text = new String(bytes, at, size, StandardCharsets.UTF_8);
        int token = vocab.id(text);
        if (token >= 0) {
            out.add(token);
            return;
        }
        int[] m = merges.get(text);
        if (m == null) {
            for (int j = 0; j < size; j++) {
                out.add(byteTokens[bytes[at + j] & 0xFF]);
            }
            return;
        }
        resegment(bytes, start[m[0]], m[2], merges, start, len, out);
        resegment(bytes, start[m[1]], m[3], merges, start, len, out);
    }

    /** llama.cpp's {@code unicode_len_utf8}: the length a lead byte announces (1 for a stray continuation). */
    private static int utf8Length(byte lead) {
        int[] lengths = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
        return lengths[(lead & 0xFF) >>> 4];
    }

    /** The token's bytes; the first piece after BOS drops the space prefix the encoder added. */
    @Override
    public byte[] decode(int previousToken, int token) {
        byte[] p = pieces[vocab.check(token)];
        if (addSpacePrefix && previousToken == vocab.bos() && p.length > 0 && p[0] == ' ') {
            return Arrays.copyOfRange(p, 1, p.length);
        }
        return p.clone();
    }

    @Override
    public long footprintBytes() {
        return super.footprintBytes() + 4L * scores.length;
    }

    /** The vocabulary, scores and space-prefix rule as bytes: what a router that never loaded the model reads. */
    byte[] image() throws java.io.IOException {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        java.io.DataOutputStream out = new java.io.DataOutputStream(bytes);
        vocab.write(out);
        for (float score : scores) {
            out.writeFloat(score);
        }
        out.writeBoolean(addSpacePrefix);
        out.flush();
        return bytes.toByteArray();
    }

    static SpmTokenizer readImage(java.io.DataInputStream in) throws java.io.IOException {
        TokenVocabulary vocab = TokenVocabulary.read(in);
        float[] scores = new float[vocab.size()];
        for (int i = 0; i < scores.length; i++) {
            scores[i] = in.readFloat();
        }
        return new SpmTokenizer(vocab, scores, in.readBoolean());
    }
}
