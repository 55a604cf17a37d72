package dev.tandem.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Vector API kernel gives the plain kernel's bits (the surefire JVM has the module), and both give
 * the products' value: integer sums exact, the float scaling within a few ulps of a double sum.
 */
class GgmlDotKernelTest {
    private static final GgmlDotKernel SCALAR = GgmlScalarDot.INSTANCE;
    private static final GgmlDotKernel VECTOR = GgmlDotKernel.select("auto");

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void vectorAndScalarAgreeBitForBitAndWithTheSum(long seed) {
        assertNotSame(SCALAR, VECTOR, "the test JVM runs with jdk.incubator.vector");
        SplittableRandom r = new SplittableRandom(seed);
        int blocks = 3;
        int n = blocks * 256;
        float[] q = new float[n];
        float[] y = new float[n];
        float[] w = new float[n];
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            q[i] = r.nextInt(-32, 32);
            y[i] = r.nextInt(-127, 128);
            w[i] = (float) r.nextGaussian();
            x[i] = (float) r.nextGaussian();
        }
        float[] d = new float[n / 32];
        float[] dmin = new float[n / 32];
        float[] yd = new float[n / 32];
        int[] scale = new int[n / 16];
        int[] min = new int[n / 16];
        int[] ysums = new int[n / 16];
        for (int i = 0; i < d.length; i++) {
            d[i] = (float) r.nextDouble(1e-3, 1e-2);
            dmin[i] = (float) r.nextDouble(1e-3, 1e-2);
            yd[i] = (float) r.nextDouble(1e-3, 1e-2);
        }
        for (int i = 0; i < scale.length; i++) {
            scale[i] = r.nextInt(0, 64);
            min[i] = r.nextInt(0, 64);
            for (int j = 0; j < 16; j++) {
                ysums[i] += (int) y[i * 16 + j];
            }
        }
        byte[] row = new byte[n / 32 * 34];
        for (int b = 0; b < n / 32; b++) {
            short h = dev.tandem.engine.HalfFloats.toHalf(d[b]);
            row[b * 34] = (byte) h;
            row[b * 34 + 1] = (byte) (h >> 8);
            for (int j = 0; j < 32; j++) {
                row[b * 34 + 2 + j] = (byte) q[b * 32 + j];
            }
        }
        float[] dh = new float[n / 32];
        for (int b = 0; b < dh.length; b++) {
            dh[b] = dev.tandem.engine.HalfFloats.half(dev.tandem.engine.HalfFloats.toHalf(d[b]));
        }
        float fromBytes = SCALAR.q8_0Row(row, y, yd, n / 32);
        assertEquals(bits(fromBytes), bits(VECTOR.q8_0Row(row, y, yd, n / 32)));
        assertEquals(bits(SCALAR.blocks32(q, dh, y, yd, n / 32)), bits(fromBytes), "a Q8_0 row from its bytes");
        float b32 = SCALAR.blocks32(q, d, y, yd, n / 32);
        assertEquals(bits(b32), bits(VECTOR.blocks32(q, d, y, yd, n / 32)));
        double expected = 0;
        for (int i = 0; i < n; i++) {
            expected += (double) q[i] * y[i] * d[i / 32] * yd[i / 32];
        }
        assertEquals(expected, b32, 1e-4 * Math.max(1, Math.abs(expected)));

        float k4 = SCALAR.q4K(q, d, dmin, scale, min, y, yd, ysums, blocks);
        assertEquals(bits(k4), bits(VECTOR.q4K(q, d, dmin, scale, min, y, yd, ysums, blocks)));
        double e4 = 0;
        for (int i = 0; i < n; i++) {
            int b = i / 256;
            int s = i / 32;
            e4 += (double) d[b] * yd[b] * scale[s] * q[i] * y[i] - (double) dmin[b] * yd[b] * min[s] * y[i];
        }
        assertEquals(e4, k4, 1e-4 * Math.max(1, Math.abs(e4)));

        float k6 = SCALAR.q6K(q, d, scale, y, yd, blocks);
        assertEquals(bits(k6), bits(VECTOR.q6K(q, d, scale, y, yd, blocks)));
        double e6 = 0;
        for (int i = 0; i < n; i++) {
            e6 += (double) d[i / 256] * yd[i / 256] * scale[i / 16] * q[i] * y[i];
        }
        assertEquals(e6, k6, 1e-4 * Math.max(1, Math.abs(e6)));

        float f = SCALAR.floats(w, x, n);
        assertEquals(bits(f), bits(VECTOR.floats(w, x, n)));
        double ef = 0;
        for (int i = 0; i < n; i++) {
            ef += (double) w[i] * x[i];
        }
        assertEquals(ef, f, 1e-4 * Math.max(1, Math.abs(ef)));
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3})
    void vectorAndScalarUnpackAlike(long seed) {
        byte[] row = new byte[256];
        new java.util.Random(seed).nextBytes(row);
        for (int[] c : new int[][] {{0, 0, -1, 0, 8}, {16, 4, -1, 0, 0}, {0, 0, 128, 0, 32}, {32, 4, 96, 6, 32}}) {
            float[] a = new float[64];
            float[] b = new float[64];
            SCALAR.unpack(row, c[0], c[1], c[2], c[3], c[4], a, 8, 32);
            VECTOR.unpack(row, c[0], c[1], c[2], c[3], c[4], b, 8, 32);
            org.junit.jupiter.api.Assertions.assertArrayEquals(a, b, java.util.Arrays.toString(c));
        }
        float[] a = new float[40];
        float[] b = new float[40];
        SCALAR.unpackQ5(row, 10, a, 4);
        VECTOR.unpackQ5(row, 10, b, 4);
        org.junit.jupiter.api.Assertions.assertArrayEquals(a, b, "Q5_0");
        float[] expanded = new float[32];
        GgmlDequant.q5_0(java.nio.ByteBuffer.wrap(row).order(java.nio.ByteOrder.LITTLE_ENDIAN), 8, expanded, 0);
        float d = dev.tandem.engine.HalfFloats.half(GgmlRowDot.int16(row, 8));
        for (int j = 0; j < 32; j++) {
            assertEquals(expanded[j], a[4 + j] * d, "Q5_0 value " + j + " is the dequantized one");
        }
    }

    @org.junit.jupiter.api.Test
    void everyHalfAndBfloat16ConvertsExactly() {
        byte[] row = new byte[2 * 65536];
        for (int h = 0; h < 65536; h++) {
            row[2 * h] = (byte) h;
            row[2 * h + 1] = (byte) (h >> 8);
        }
        for (boolean bf16 : new boolean[] {false, true}) {
            float[] a = new float[65536];
            float[] b = new float[65536];
            SCALAR.halves(row, a, 65536, bf16);
            VECTOR.halves(row, b, 65536, bf16);
            for (int h = 0; h < 65536; h++) {
                float expected = bf16
                        ? dev.tandem.engine.HalfFloats.bfloat16((short) h)
                        : dev.tandem.engine.HalfFloats.half((short) h);
                assertEquals(bits(expected), bits(a[h]), "plain, " + (bf16 ? "bf16 " : "f16 ") + h);
                assertEquals(bits(expected), bits(b[h]), "vector, " + (bf16 ? "bf16 " : "f16 ") + h);
            }
        }
    }

    private static int bits(float f) {
        return Float.floatToRawIntBits(f);
    }
}
