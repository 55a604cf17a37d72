package dev.tandem.engine.gguf;

import dev.tandem.engine.HalfFloats;

/**
 * One row of a weight matrix, unpacked from its file type once, dotted with each vector of a batch as
 * llama.cpp's CPU dot products compute it: integer sums inside a block (exact, in any order), scaled by
 * the weight's and the activation's block scales in float ({@code ggml_vec_dot_q8_0_q8_0},
 * {@code _q4_0_q8_0}, {@code _q4_K_q8_K}, {@code _q6_K_q8_K}); float sums for F32, F16 and BF16. Only the
 * order of the float sums differs from llama.cpp's SIMD kernels. One instance per thread.
 */
final class GgmlRowDot {
    private final GgmlType type;
    private final int cols;
    /** F32, F16, BF16: the row as floats. */
    private final float[] values;
    /** Quantized types: each element's integer value (Q4_0: −8..7, Q5_0: −16..15, Q4_K: 0..15, Q6_K: −32..31, Q8_0). */
    private final byte[] q;
    /** Each block's {@code d} (and Q4_K's {@code dmin}). */
    private final float[] d;

    private final float[] dmin;
    /** K-quants: Q4_K's scale and min per 32 elements, Q6_K's scale per 16. */
    private final int[] scale;

    private final int[] min;

    GgmlRowDot(GgmlType type, int cols) {
        this.type = type;
        this.cols = cols;
        int blocks = cols / type.blockElements();
        boolean floats = type == GgmlType.F32 || type == GgmlType.F16 || type == GgmlType.BF16;
        values = floats ? new float[cols] : null;
        q = floats ? null : new byte[cols];
        d = new float[blocks];
        dmin = new float[blocks];
        scale = new int[cols / 16];
        min = new int[cols / 32];
    }

    /** Unpacks the row in {@code row} (its bytes in file layout). */
    void load(byte[] row) {
        int bb = type.blockBytes();
        switch (type) {
            case F32 -> {
                for (int j = 0; j < cols; j++) {
                    values[j] = Float.intBitsToFloat(int32(row, 4 * j));
                }
            }
            case F16 -> {
                for (int j = 0; j < cols; j++) {
                    values[j] = HalfFloats.half(int16(row, 2 * j));
                }
            }
            case BF16 -> {
                for (int j = 0; j < cols; j++) {
                    values[j] = HalfFloats.bfloat16(int16(row, 2 * j));
                }
            }
            case Q8_0 -> {
                for (int k = 0; k < d.length; k++) {
                    d[k] = HalfFloats.half(int16(row, k * bb));
                    System.arraycopy(row, k * bb + 2, q, k * 32, 32);
                }
            }
            case Q4_0 -> {
                for (int k = 0; k < d.length; k++) {
                    d[k] = HalfFloats.half(int16(row, k * bb));
                    for (int j = 0; j < 16; j++) {
                        int v = row[k * bb + 2 + j] & 0xFF;
                        q[k * 32 + j] = (byte) ((v & 0x0F) - 8);
                        q[k * 32 + j + 16] = (byte) ((v >>> 4) - 8);
                    }
                }
            }
            case Q5_0 -> {
                for (int k = 0; k < d.length; k++) {
                    d[k] = HalfFloats.half(int16(row, k * bb));
                    int qh = int32(row, k * bb + 2);
                    for (int j = 0; j < 16; j++) {
                        int v = row[k * bb + 6 + j] & 0xFF;
                        q[k * 32 + j] = (byte) (((v & 0x0F) | (((qh >>> j) << 4) & 0x10)) - 16);
                        q[k * 32 + j + 16] = (byte) (((v >>> 4) | ((qh >>> (j + 12)) & 0x10)) - 16);
                    }
                }
            }
            case Q4_K -> GgmlKQuants.unpackQ4K(row, d, dmin, scale, min, q);
            case Q6_K -> GgmlKQuants.unpackQ6K(row, d, scale, q);
            default -> throw new GgufFormatException("tensors of type " + type + " are not supported");
        }
    }

    /** The loaded row · activation vector {@code b}. */
    float dot(GgmlActivations a, int b) {
        return switch (type) {
            case F32, F16, BF16 -> floats(a.values[b]);
            case Q8_0, Q4_0, Q5_0 -> q8(a.qs[b], a.scales[b]);
            case Q4_K -> q4K(a.qs[b], a.scales[b], a.sums16[b]);
            case Q6_K -> q6K(a.qs[b], a.scales[b]);
            default -> throw new IllegalStateException(type.toString());
        };
    }

    private float floats(float[] x) {
        float sum = 0;
        for (int j = 0; j < cols; j++) {
            sum += values[j] * x[j];
        }
        return sum;
    }

    private float q8(byte[] y, float[] yd) {
        float sum = 0;
        for (int k = 0; k < d.length; k++) {
            int isum = 0;
            int o = k * 32;
            for (int j = 0; j < 32; j++) {
                isum += q[o + j] * y[o + j];
            }
            sum += isum * (d[k] * yd[k]);
        }
        return sum;
    }

    private float q4K(byte[] y, float[] yd, int[] ysums) {
        float sum = 0;
        for (int k = 0; k < d.length; k++) {
            int isum = 0;
            int imin = 0;
            for (int s = 0; s < 8; s++) {
                int o = k * 256 + s * 32;
                int dot = 0;
                for (int j = 0; j < 32; j++) {
                    dot += q[o + j] * y[o + j];
                }
                int g = k * 8 + s;
                isum += scale[g] * dot;
                imin += min[g] * (ysums[2 * g] + ysums[2 * g + 1]);
            }
            sum += d[k] * yd[k] * isum;
            sum -= dmin[k] * yd[k] * imin;
        }
        return sum;
    }

    private float q6K(byte[] y, float[] yd) {
        float sum = 0;
        for (int k = 0; k < d.length; k++) {
            int isum = 0;
            for (int g = 0; g < 16; g++) {
                int o = k * 256 + g * 16;
                int dot = 0;
                for (int j = 0; j < 16; j++) {
                    dot += q[o + j] * y[o + j];
                }
                isum += scale[k * 16 + g] * dot;
            }
            sum += d[k] * yd[k] * isum;
        }
        return sum;
    }

    static short int16(byte[] b, int at) {
        return (short) ((b[at] & 0xFF) | (b[at + 1] << 8));
    }

    static int int32(byte[] b, int at) {
        return (b[at] & 0xFF) | (b[at + 1] & 0xFF) << 8 | (b[at + 2] & 0xFF) << 16 | b[at + 3] << 24;
    }
}
