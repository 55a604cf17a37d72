package dev.tandem.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A file that is not a usable GGUF is refused with a message naming what is wrong, and never with anything else. */
class GgufMalformedTest {
    private static final String KEY = "general.architecture";
    // magic, version, tensor count, metadata count
    private static final int KEY_LENGTH_AT = 4 + 4 + 8 + 8;
    private static final int VALUE_TYPE_AT = KEY_LENGTH_AT + 8 + KEY.length();
    private static final int VALUE_LENGTH_AT = VALUE_TYPE_AT + 4;
    private static final int TENSOR_AT = VALUE_LENGTH_AT + 8 + "llama".length();
    private static final int TENSOR_TYPE_AT = TENSOR_AT + 8 + "w".length() + 4 + 8 * 2;

    @TempDir
    Path dir;

    private byte[] valid;

    @BeforeEach
    void write() throws IOException {
        Path file = dir.resolve("valid.gguf");
        new GgufWriter()
                .put(KEY, GgufValue.string("llama"))
                .tensor("w", new long[] {32, 2}, GgmlType.Q8_0, new byte[68])
                .write(file);
        valid = Files.readAllBytes(file);
        GgufFile.open(file); // the unmodified file opens
    }

    private String refusal(byte[] bytes) throws IOException {
        Path file = Files.write(dir.resolve("bad.gguf"), bytes);
        return assertThrows(GgufFormatException.class, () -> GgufFile.open(file))
                .getMessage();
    }

    private byte[] with(int at, int int32) {
        byte[] b = valid.clone();
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putInt(at, int32);
        return b;
    }

    private byte[] withLong(int at, long int64) {
        byte[] b = valid.clone();
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(at, int64);
        return b;
    }

    private static void assertSays(String message, String... words) {
        for (String w : words) {
            assertTrue(message.contains(w), "'" + message + "' should say " + w);
        }
    }

    @Test
    void theLayoutThisTestPatchesIsTheWritersOne() {
        String key = new String(valid, KEY_LENGTH_AT + 8, KEY.length(), StandardCharsets.UTF_8);
        assertTrue(key.equals(KEY), key);
        assertTrue(valid[TENSOR_TYPE_AT] == GgmlType.Q8_0.id(), "the tensor's type is where the test patches it");
    }

    @Test
    void aWrongMagicIsNotAGgufFile() throws IOException {
        assertSays(refusal("PK\u0003\u0004 not a model".getBytes(StandardCharsets.ISO_8859_1)), "not a GGUF file");
    }

    @Test
    void versionsOtherThanTwoAndThreeAreRefused() throws IOException {
        assertSays(refusal(with(4, 1)), "version 1", "versions 2 and 3");
        assertSays(refusal(with(4, Integer.reverseBytes(3))), "big-endian");
    }

    @Test
    void aFileEndingInsideItsHeaderIsRefused() throws IOException {
        assertSays(refusal(Arrays.copyOf(valid, TENSOR_AT + 5)), "ends inside");
    }

    @Test
    void countsAndLengthsPastTheFileAreRefused() throws IOException {
        assertSays(refusal(withLong(8, 1L << 40)), "tensor count", "does not fit");
        assertSays(refusal(withLong(16, -1)), "metadata count");
        assertSays(refusal(withLong(VALUE_LENGTH_AT, 1L << 33)), "string of");
    }

    @Test
    void unknownTypesAreNamed() throws IOException {
        assertSays(refusal(with(VALUE_TYPE_AT, 99)), "unknown metadata value type 99");
        assertSays(refusal(with(TENSOR_TYPE_AT, 77)), "tensor w", "ggml type 77");
    }

    @Test
    void aTensorPastTheEndIsRefused() throws IOException {
        // 68 bytes of Q8_0 padded to 96: cutting 40 cuts into the tensor, not only its padding.
        assertSays(refusal(Arrays.copyOf(valid, valid.length - 40)), "tensor w", "past the end");
    }

    @Test
    void aMetadataKeyTwiceIsRefused() throws IOException {
        // The writer keeps keys unique, so two keys of one length are written and the second made the first.
        Path file = dir.resolve("twice.gguf");
        new GgufWriter()
                .put(KEY, GgufValue.string("a"))
                .put("general.architecturf", GgufValue.string("b"))
                .write(file);
        byte[] b = Files.readAllBytes(file);
        int secondKeyAt = KEY_LENGTH_AT + 8 + KEY.length() + 4 + 8 + "a".length() + 8;
        b[secondKeyAt + KEY.length() - 1] = 'e';
        assertSays(refusal(b), "'" + KEY + "' twice");
    }

    @Test
    void randomDamageIsRefusedOrReadNeverAnythingElse() throws IOException {
        Random random = new Random(42);
        Path file = dir.resolve("fuzz.gguf");
        int opened = 0;
        for (int i = 0; i < 500; i++) {
            byte[] b = valid.clone();
            for (int k = 1 + random.nextInt(4); k > 0; k--) {
                b[random.nextInt(Math.min(b.length, TENSOR_TYPE_AT + 12))] = (byte) random.nextInt(256);
            }
            if (random.nextInt(10) == 0) {
                b = Arrays.copyOf(b, random.nextInt(b.length));
            }
            Files.write(file, b);
            try {
                GgufFile.open(file);
                opened++;
            } catch (GgufFormatException e) {
                assertTrue(e.getMessage() != null && !e.getMessage().isBlank());
            }
        }
        assertTrue(opened < 500, "some damage must be seen");
    }
}
