package dev.tandem.engine.tokenizer;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The sentencepiece-derived tokenizer of llama2.c ({@code tokenizer.bin}), encoding and decoding
 * exactly as llama2.c's run.c does: BOS 1, EOS 2, bytes {@code <0x00>..<0xFF>} at ids 3..258, greedy
 * highest-score pair merging, leading space dropped from the first piece after BOS.
 */
public final class Llama2cTokenizer implements Tokenizer {
    public static final int UNK = 0;
    public static final int BOS = 1;
    public static final int EOS = 2;
    private static final int BYTE_OFFSET = 3;

    private final String[] pieces; // each byte of a piece as one ISO-8859-1 char, so byte strings are exact keys
    private final float[] scores;
    private final int maxTokenLength;
    private final Map<String, Integer> ids;
    private final byte[][] decoded;
    private final byte[][] decodedAfterBos;

    private Llama2cTokenizer(String[] pieces, float[] scores, int maxTokenLength) {
        this.pieces = pieces;
        this.scores = scores;
        this.maxTokenLength = maxTokenLength;
        int n = pieces.length;
        this.ids = new HashMap<>(n * 2);
        this.decoded = new byte[n][];
        this.decodedAfterBos = new byte[n][];
        for (int i = n - 1; i >= 0; i--) {
            ids.put(pieces[i], i); // descending so that the lowest id wins should a piece repeat
        }
        for (int i = 0; i < n; i++) {
            String piece = pieces[i];
            decoded[i] = pieceBytes(i, piece);
            decodedAfterBos[i] = piece.startsWith(" ") ? pieceBytes(i, piece.substring(1)) : decoded[i];
        }
    }

    /**
     * Per token: its piece (a String of 40 bytes + its chars), score, id map entry (a HashMap node, a boxed
     * id and two table slots: about 64 bytes) and its decoded bytes (one or two arrays of 16 + length).
     */
    @Override
    public long footprintBytes() {
        long bytes = 16L * 5; // the five arrays' headers
        for (int i = 0; i < pieces.length; i++) {
            int len = pieces[i].length();
            bytes += 40 + len + Float.BYTES + 64 + 16 + len + 8 * 3;
            if (decodedAfterBos[i] != decoded[i]) {
                bytes += 16 + decodedAfterBos[i].length;
            }
        }
        return bytes;
    }

    /** Loads every token record in the file. */
    public static Llama2cTokenizer load(Path file) throws IOException {
        return load(file, -1);
    }

    /** Loads exactly {@code vocabSize} token records (as run.c does with the model's vocab size). */
    public static Llama2cTokenizer load(Path file, int vocabSize) throws IOException {
        return read(Files.readAllBytes(file), vocabSize, file.toString());
    }

    /**
     * Reads a {@code tokenizer.bin} image: every token record, or exactly {@code vocabSize} of them when it
     * is not negative. {@code source} names the image in errors.
     */
    public static Llama2cTokenizer read(byte[] image, int vocabSize, String source) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(image).order(ByteOrder.LITTLE_ENDIAN);
        try {
            int maxTokenLength = buf.getInt();
            int capacity = vocabSize >= 0 ? vocabSize : buf.remaining() / 8;
            String[] pieces = new String[capacity];
            float[] scores = new float[capacity];
            int n = 0;
            while (vocabSize >= 0 ? n < vocabSize : buf.hasRemaining()) {
                scores[n] = buf.getFloat();
                int len = buf.getInt();
                if (len < 0) {
                    throw new IOException(source + ": token " + n + " has invalid length " + len);
                }
                if (len > buf.remaining()) {
                    throw new BufferUnderflowException();
                }
                byte[] bytes = new byte[len];
                buf.get(bytes);
                pieces[n++] = new String(bytes, StandardCharsets.ISO_8859_1);
            }
            if (n < BYTE_OFFSET + 256) {
                throw new IOException(
                        source + ": " + n + " tokens, a llama2.c tokenizer needs at least 259 (3 special + 256 bytes)");
            }
            return new Llama2cTokenizer(
                    java.util.Arrays.copyOf(pieces, n), java.util.Arrays.copyOf(scores, n), maxTokenLength);
        } catch (BufferUnderflowException e) {
            throw new IOException(source + ": truncated tokenizer file"
                    + (vocabSize >= 0 ? " (expected " + vocabSize + " tokens)" : ""));
        }
    }

    /** This vocabulary as a {@code tokenizer.bin} image, which {@link #read} turns back into an equal tokenizer. */
    public byte[] image() {
        int size = 4;
        for (String p : pieces) {
            size += 8 + p.length();
        }
        ByteBuffer buf = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        buf.putInt(maxTokenLength);
        for (int i = 0; i < pieces.length; i++) {
            buf.putFloat(scores[i]);
            buf.putInt(pieces[i].length());
            buf.put(pieces[i].getBytes(StandardCharsets.ISO_8859_1));
        }
        return buf.array();
    }

    @Override
    public int maxTokenBytes() {
        return Math.max(maxTokenLength, 1);
    }

    @Override
    public int vocabSize() {
        return pieces.length;
    }

    @Override
    public int bos() {
        return BOS;
    }

    @Override
    public int eos() {
        return EOS;
    }

    public int maxTokenLength() {
        return maxTokenLength;
    }

    /** The raw bytes of a token's piece as stored in the file. */
    public byte[] piece(int token) {
        return pieces[checkToken(token)].getBytes(StandardCharsets.ISO_8859_1);
    }

    public float score(int token) {
        return scores[checkToken(token)];
    }

    /** The id of a piece given as raw bytes, or -1. */
    public int lookup(byte[] piece) {
        return ids.getOrDefault(new String(piece, StandardCharsets.ISO_8859_1), -1);
    }

    /**
     * run.c's {@code encode}: optional BOS, a dummy-prefix " " token when the text is non-empty, one
     * token per UTF-8 code point (raw-byte tokens when the code point is not in the vocabulary), then
     * repeatedly merge the adjacent pair whose concatenation is the best-scoring piece (leftmost on
     * ties) until no pair merges.
     */
    @Override
    public int[] encode(String text, boolean addBos) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int[] tokens = new int[bytes.length + 2];
        int n = 0;
        if (addBos) {
            tokens[n++] = BOS;
        }
        if (bytes.length > 0) {
            int dummy = ids.getOrDefault(" ", -1);
            if (dummy < 0) {
                throw new IllegalStateException("tokenizer has no \" \" piece for the dummy prefix");
            }
            tokens[n++] = dummy;
        }
        n = appendCodePoints(bytes, tokens, n);
        n = mergePairs(tokens, n);
        return java.util.Arrays.copyOf(tokens, n);
    }

    /** run.c's grouping: a code point is a lead byte plus up to 3 continuation bytes. */
    private int appendCodePoints(byte[] bytes, int[] tokens, int n) {
        char[] buffer = new char[4];
        int len = 0;
        for (int i = 0; i < bytes.length; i++) {
            int c = bytes[i] & 0xFF;
            if ((c & 0xC0) != 0x80) {
                len = 0;
            }
            buffer[len++] = (char) c;
            int next = i + 1 < bytes.length ? bytes[i + 1] & 0xFF : 0;
            if ((next & 0xC0) == 0x80 && len < 4) {
                continue;
            }
            int id = ids.getOrDefault(new String(buffer, 0, len), -1);
            if (id >= 0) {
                tokens[n++] = id;
            } else {
                for (int k = 0; k < len; k++) {
                    tokens[n++] = buffer[k] + BYTE_OFFSET; // byte fallback
                }
            }
            len = 0;
        }
        return n;
    }

    /** Greedy merging; pair[i] caches the piece id of tokens[i] + tokens[i + 1] (or -1). */
    private int mergePairs(int[] tokens, int n) {
        int[] pair = new int[Math.max(n - 1, 0)];
        for (int i = 0; i < n - 1; i++) {
            pair[i] = pairId(tokens[i], tokens[i + 1]);
        }
        while (true) {
            float bestScore = -1e10f;
            int bestIdx = -1;
            for (int i = 0; i < n - 1; i++) {
                if (pair[i] >= 0 && scores[pair[i]] > bestScore) {
                    bestScore = scores[pair[i]];
                    bestIdx = i;
                }
            }
            if (bestIdx < 0) {
                return n;
            }
            tokens[bestIdx] = pair[bestIdx];
            System.arraycopy(tokens, bestIdx + 2, tokens, bestIdx + 1, n - bestIdx - 2);
            System.arraycopy(pair, bestIdx + 1, pair, bestIdx, n - bestIdx - 2);
            n--;
            if (bestIdx > 0) {
                pair[bestIdx - 1] = pairId(tokens[bestIdx - 1], tokens[bestIdx]);
            }
            if (bestIdx < n - 1) {
                pair[bestIdx] = pairId(tokens[bestIdx], tokens[bestIdx + 1]);
            }
        }
    }

    private int pairId(int a, int b) {
        return ids.getOrDefault(pieces[a].concat(pieces[b]), -1);
    }

    /**
     * run.c's {@code decode}: after BOS a leading space is dropped; a {@code <0xXX>} piece is that raw
     * byte. The special tokens (unk, BOS, EOS) contribute nothing.
     */
    @Override
    public byte[] decode(int previousToken, int token) {
        checkToken(token);
        byte[] bytes = previousToken == BOS ? decodedAfterBos[token] : decoded[token];
        return bytes.clone();
    }

    /** run.c stops on BOS (it delimits sequences); EOS ends one too. */
    @Override
    public boolean isEndOfSequence(int token) {
        return token == BOS || token == EOS;
    }

    private int checkToken(int token) {
        if (token < 0 || token >= pieces.length) {
            throw new IllegalArgumentException("token " + token + " outside vocabulary [0, " + pieces.length + ")");
        }
        return token;
    }

    /** Bytes a piece stands for: raw byte for {@code <0xXX>} (sscanf "<0x%02hhX>" rules), else itself. */
    private static byte[] pieceBytes(int id, String piece) {
        if (id == UNK || id == BOS || id == EOS) {
            return new byte[0];
        }
        if (piece.startsWith("<0x") && piece.length() > 3) {
            int value = 0;
            int digits = 0;
            while (digits < 2 && 3 + digits < piece.length() && Character.digit(piece.charAt(3 + digits), 16) >= 0) {
                value = value * 16 + Character.digit(piece.charAt(3 + digits), 16);
                digits++;
            }
            if (digits > 0) {
                return new byte[] {(byte) value};
            }
        }
        return piece.getBytes(StandardCharsets.ISO_8859_1);
    }
}
