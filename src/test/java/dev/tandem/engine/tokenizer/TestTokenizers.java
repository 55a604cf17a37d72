package dev.tandem.engine.tokenizer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A small llama2.c tokenizer written by the tests themselves (no download): the three specials, the
 * 256 byte tokens, printable characters and a few English merges — enough for real merging, chat
 * templates and a vocabulary unlike the built-in one.
 */
public final class TestTokenizers {
    private static final String[] MERGES = {
        " t", "th", "he", " the", "in", "on", "an", "er", " a", "re", "at", "en", "nd", " and", "ing", "ed", " s", "or",
        "ou", "is", " w", " o", "[INST]", "[/INST]", " [", "INST", "/INST", "</s>", "<s>"
    };

    private TestTokenizers() {}

    /** The image ({@code tokenizer.bin} bytes) of the test vocabulary. */
    public static byte[] llama2cImage() {
        List<String> pieces = new ArrayList<>(List.of("<unk>", "<s>", "</s>"));
        for (int b = 0; b < 256; b++) {
            pieces.add(String.format("<0x%02X>", b));
        }
        for (char c = ' '; c < 127; c++) {
            pieces.add(String.valueOf(c));
        }
        pieces.addAll(List.of(MERGES));
        int size = 4;
        int longest = 0;
        for (String p : pieces) {
            size += 8 + p.length();
            longest = Math.max(longest, p.length());
        }
        ByteBuffer buf =
                ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN).putInt(longest);
        for (int i = 0; i < pieces.size(); i++) {
            // Longer merges score higher, as sentencepiece's do for common words.
            buf.putFloat(i < 3 + 256 ? 0f : pieces.get(i).length() * 1.5f - i * 0.001f);
            byte[] bytes = pieces.get(i).getBytes(StandardCharsets.ISO_8859_1);
            buf.putInt(bytes.length).put(bytes);
        }
        return buf.array();
    }

    public static Llama2cTokenizer llama2c() {
        try {
            return Llama2cTokenizer.read(llama2cImage(), -1, "test tokenizer");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
