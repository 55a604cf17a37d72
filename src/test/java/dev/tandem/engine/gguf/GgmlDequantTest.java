package dev.tandem.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * Each block format read as llama.cpp's ggml-quants.c defines it, on blocks whose every field is set
 * by hand, so a misplaced nibble, scale or sign shows as a wrong value at a known index.
 */
class GgmlDequantTest {
    private static final short ONE = 0x3C00;
    private static final short HALF = 0x3800; // 0.5
    private static final short QUARTER = 0x3400; // 0.25

    private static ByteBuffer buffer(int bytes) {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static float[] read(GgmlType type, ByteBuffer b, int elements) {
        float[] out = new float[elements];
        GgmlDequant.row(type, b, 0, elements, out, 0);
        return out;
    }

    @Test
    void q8_0IsTheScaleTimesEachSignedByte() {
        ByteBuffer b = buffer(34 * 2);
        b.putShort(0, HALF);
        b.putShort(34, QUARTER);
        for (int j = 0; j < 32; j++) {
            b.put(2 + j, (byte) (j - 16));
            b.put(36 + j, (byte) (j == 0 ? -128 : 127));
        }
        float[] y = read(GgmlType.Q8_0, b, 64);
        for (int j = 0; j < 32; j++) {
            assertEquals((j - 16) * 0.5f, y[j]);
        }
        assertEquals(-32f, y[32]);
        assertEquals(31.75f, y[63]);
    }

    @Test
    void q4_0PutsLowNibblesFirstThenHighOnesEachMinusEight() {
        ByteBuffer b = buffer(18);
        b.putShort(0, ONE);
        for (int j = 0; j < 16; j++) {
            b.put(2 + j, (byte) (j | ((15 - j) << 4)));
        }
        float[] y = read(GgmlType.Q4_0, b, 32);
        for (int j = 0; j < 16; j++) {
            assertEquals(j - 8, y[j]);
            assertEquals(15 - j - 8, y[j + 16]);
        }
    }

    @Test
    void q4_KDecodesSixBitScalesAndMinsOfBothPacks() {
        ByteBuffer b = buffer(144);
        b.putShort(0, ONE); // d
        b.putShort(2, HALF); // dmin
        // Scales/mins 0-3 in the low 6 bits of bytes 0-3 / 4-7; 4-7 in bytes 8-11 (low / high nibble) with
        // their top 2 bits in the top bits of bytes 0-3 / 4-7.
        int[] sc = {1, 2, 3, 4, 37, 46, 55, 63};
        int[] mn = {5, 6, 7, 8, 49, 18, 27, 60};
        for (int j = 0; j < 4; j++) {
            b.put(4 + j, (byte) (sc[j] | ((sc[j + 4] >> 4) << 6)));
            b.put(4 + j + 4, (byte) (mn[j] | ((mn[j + 4] >> 4) << 6)));
            b.put(4 + j + 8, (byte) ((sc[j + 4] & 0xF) | ((mn[j + 4] & 0xF) << 4)));
        }
        for (int l = 0; l < 128; l++) {
            b.put(16 + l, (byte) ((l % 16) | ((15 - l % 16) << 4)));
        }
        float[] y = read(GgmlType.Q4_K, b, 256);
        for (int g = 0; g < 4; g++) {
            for (int l = 0; l < 32; l++) {
                int byteIndex = g * 32 + l;
                int low = byteIndex % 16;
                int high = 15 - byteIndex % 16;
                assertEquals(1f * sc[2 * g] * low - 0.5f * mn[2 * g], y[g * 64 + l], "element " + (g * 64 + l));
                assertEquals(
                        1f * sc[2 * g + 1] * high - 0.5f * mn[2 * g + 1],
                        y[g * 64 + 32 + l],
                        "element " + (g * 64 + 32 + l));
            }
        }
    }

    @Test
    void q6_KJoinsLowNibblesAndHighPairsUnderSignedScales() {
        ByteBuffer b = buffer(210);
        for (int i = 0; i < 128; i++) {
            b.put(i, (byte) ((i % 16) | (((i + 3) % 16) << 4)));
        }
        for (int i = 0; i < 64; i++) {
            b.put(128 + i, (byte) (i * 37 + 11));
        }
        for (int i = 0; i < 16; i++) {
            b.put(192 + i, (byte) (i % 2 == 0 ? i + 1 : -(i + 1)));
        }
        b.putShort(208, QUARTER);
        float[] y = read(GgmlType.Q6_K, b, 256);
        float[] expected = new float[256];
        for (int half = 0; half < 2; half++) {
            for (int l = 0; l < 32; l++) {
                int ql0 = (half * 64 + l) % 16 | (((half * 64 + l + 3) % 16) << 4);
                int ql32 = (half * 64 + l + 32) % 16 | (((half * 64 + l + 32 + 3) % 16) << 4);
                int qh = ((half * 32 + l) * 37 + 11) & 0xFF;
                int[] q = {
                    ((ql0 & 15) | ((qh & 3) << 4)) - 32,
                    ((ql32 & 15) | (((qh >> 2) & 3) << 4)) - 32,
                    ((ql0 >> 4) | (((qh >> 4) & 3) << 4)) - 32,
                    ((ql32 >> 4) | (((qh >> 6) & 3) << 4)) - 32
                };
                for (int k = 0; k < 4; k++) {
                    int s = half * 8 + l / 16 + 2 * k;
                    int scale = s % 2 == 0 ? s + 1 : -(s + 1);
                    expected[half * 128 + l + 32 * k] = 0.25f * scale * q[k];
                }
            }
        }
        assertArrayEquals(expected, y);
    }

    @Test
    void halfAndBrainFloatTensorsAndARowInTheMiddle() {
        ByteBuffer b = buffer(8);
        b.putShort(0, ONE).putShort(2, HALF).putShort(4, QUARTER).putShort(6, (short) 0xC000);
        float[] out = new float[3];
        GgmlDequant.row(GgmlType.F16, b, 1, 2, out, 1);
        assertArrayEquals(new float[] {0, 0.5f, 0.25f}, out);
        ByteBuffer bf = buffer(4).putShort(0, (short) 0x3F80).putShort(2, (short) 0x4040);
        assertArrayEquals(new float[] {1f, 3f}, read(GgmlType.BF16, bf, 2));
    }

    @Test
    void partialBlocksAndUnsupportedTypesAreRefused() {
        ByteBuffer b = buffer(144);
        assertThrows(
                IllegalArgumentException.class, () -> GgmlDequant.row(GgmlType.Q4_K, b, 0, 128, new float[256], 0));
        assertThrows(
                GgufFormatException.class,
                () -> GgmlDequant.row(GgmlType.Q5_K, buffer(176), 0, 256, new float[256], 0));
    }
}
