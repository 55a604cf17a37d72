package dev.tandem.engine.tokenizer;

/**
 * GPT-2's byte-level alphabet: each of the 256 byte values stands for one printable character, so a
 * byte-level BPE vocabulary ({@code tokenizer.json} with a {@code ByteLevel} decoder: GPT-2, Llama 3,
 * Qwen2) spells any byte string, partial UTF-8 included, as text. Printable Latin-1 bytes stand for
 * themselves; the others for U+0100 upwards, in byte order.
 */
public final class ByteLevelAlphabet {
    private static final char[] BYTE_TO_CHAR = new char[256];
    private static final int[] CHAR_TO_BYTE = new int[0x100 + 256];

    static {
        java.util.Arrays.fill(CHAR_TO_BYTE, -1);
        int next = 0x100;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
            char c = printable ? (char) b : (char) next++;
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = b;
        }
    }

    private ByteLevelAlphabet() {}

    /** The bytes a token string spells, or null when a character is outside the alphabet. */
    public static byte[] bytes(String token) {
        byte[] out = new byte[token.length()];
        for (int i = 0; i < out.length; i++) {
            char c = token.charAt(i);
            int b = c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
            if (b < 0) {
                return null;
            }
            out[i] = (byte) b;
        }
        return out;
    }

    /** The token string spelling {@code bytes[from, to)}. */
    public static String spell(byte[] bytes, int from, int to) {
        char[] out = new char[to - from];
        for (int i = from; i < to; i++) {
            out[i - from] = BYTE_TO_CHAR[bytes[i] & 0xFF];
        }
        return new String(out);
    }
}
