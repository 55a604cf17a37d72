package dev.tandem.engine.tokenizer;

import java.nio.charset.StandardCharsets;

/** Byte-level tokenizer: token id = byte value (0..255), then BOS = 256 and EOS = 257. */
public final class ByteTokenizer implements Tokenizer {
    public static final int BOS = 256;
    public static final int EOS = 257;
    public static final int VOCAB_SIZE = 258;

    public static final ByteTokenizer INSTANCE = new ByteTokenizer();

    private ByteTokenizer() {}

    @Override
    public int maxTokenBytes() {
        return 1;
    }

    @Override
    public int vocabSize() {
        return VOCAB_SIZE;
    }

    @Override
    public int bos() {
        return BOS;
    }

    @Override
    public int eos() {
        return EOS;
    }

    @Override
    public int[] encode(String text, boolean addBos) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int start = addBos ? 1 : 0;
        int[] tokens = new int[bytes.length + start];
        if (addBos) {
            tokens[0] = BOS;
        }
        for (int i = 0; i < bytes.length; i++) {
            tokens[start + i] = bytes[i] & 0xFF;
        }
        return tokens;
    }

    @Override
    public byte[] decode(int previousToken, int token) {
        if (token < 0 || token >= VOCAB_SIZE) {
            throw new IllegalArgumentException("token " + token + " outside byte vocabulary [0, " + VOCAB_SIZE + ")");
        }
        return token < 256 ? new byte[] {(byte) token} : new byte[0];
    }

    @Override
    public boolean isEndOfSequence(int token) {
        return token == EOS;
    }

    @Override
    public String toString() {
        return "ByteTokenizer";
    }
}
