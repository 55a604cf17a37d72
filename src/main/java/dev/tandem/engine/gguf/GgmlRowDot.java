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
    private final float[] q;
    /** Each block's {@code d} (and Q4_K's {@code dmin}). */
    private final float[] d;

    private final float[] dmin;
    /** K-quants: Q4_K's scale and min per 32 elements, Q6_K's scale per 16. */
    private final int[] scale;

    private final int[] min;
    private final boolean unpack;
    /** Q8_0: the loaded row's bytes, as they are. */
    private byte[] row;

    /** @param unpack whether rows are unpacked once for several vectors (else Q8_0 is read as it is) */
    GgmlRowDot(GgmlType type, int cols, boolean unpack) {
        this.type = type;
        this.unpack = unpack;
        this.cols = cols;
        int blocks = cols / type.blockElements();
        boolean floats = type == GgmlType.F32 || type == GgmlType.F16 || type == GgmlType.BF16;
        values = floats ? new float[cols] : null;
        q = floats ? null : new float[cols];
        d = new float[blocks];
        dmin = new float[blocks];
        scale = new int[cols / 16];
        min = new int[cols / 32];
    }

    private static final GgmlDotKernel KERNEL = GgmlDotKernel.ACTIVE;

    /** Unpacks the row in {@code row} (its bytes in file layout). */
    void load(byte[] row) {
        int bb = type.blockBytes();
        switch (type) {
            case F32 ->
                java.nio.ByteBuffer.wrap(row)
                        .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                        .asFloatBuffer()
                        .get(values, 0, cols);
            case F16 -> KERNEL.halves(row, values, cols, false);
            case BF16 -> KERNEL.halves(row, values, cols, true);
            case Q8_0 -> {
                this.row = row; // one vector: multiplied straight from the bytes
                if (unpack) { // several: the bytes become floats once, not once per vector
                    for (int k = 0; k < d.length; k++) {
                        d[k] = HalfFloats.half(int16(row, k * bb));
                        for (int j = 0; j < 32; j++) {
                            q[k * 32 + j] = row[k * bb + 2 + j];
                        }
                    }
                }
            }
            case Q4_0 -> {
                for (int k = 0; k < d.length; k++) {
                    d[k] = HalfFloats.half(int16(row, k * bb));
                    KERNEL.unpack(row, k * bb + 2, 0, -1, 0, 8, q, k * 32, 16);
                    KERNEL.unpack(row, k * bb + 2, 4, -1, 0, 8, q, k * 32 + 16, 16);
                }
            }
            case Q5_0 -> {
                for (int k = 0; k < d.length; k++) {
                    d[k] = HalfFloats.half(int16(row, k * bb));
                    KERNEL.unpackQ5(row, k * bb + 2, q, k * 32);
                }
            }
            case Q4_K -> GgmlKQuants.unpackQ4K(row, d, dmin, scale, min, q);
            case Q6_K -> GgmlKQuants.unpackQ6K(row, d, scale, q);
            default -> throw new GgufFormatException("tensors of type " + type + " are not supported");
        }
    }

    /** The loaded row · activation vector {@code b}. */
    float dot(GgmlActivations a, int b) {
        GgmlDotKernel k = GgmlDotKernel.ACTIVE;
        return switch (type) {
            case F32, F16, BF16 -> k.floats(values, a.values[b], cols);
            case Q8_0 ->
                unpack
                        ? k.blocks32(q, d, a.qs[b], a.scales[b], d.length)
                        : k.q8_0Row(row, a.qs[b], a.scales[b], d.length);
            case Q4_0, Q5_0 -> k.blocks32(q, d, a.qs[b], a.scales[b], d.length);
            case Q4_K -> k.q4K(q, d, dmin, scale, min, a.qs[b], a.scales[b], a.sums16[b], d.length);
            case Q6_K -> k.q6K(q, d, scale, a.qs[b], a.scales[b], d.length);
            default -> throw new IllegalStateException(type.toString());
        };
    }

    static short int16(byte[] b, int at) {
        return (short) ((b[at] & 0xFF) | (b[at + 1] << 8));
    }

    static int int32(byte[] b, int at) {
        return (b[at] & 0xFF) | (b[at + 1] & 0xFF) << 8 | (b[at + 2] & 0xFF) << 16 | b[at + 3] << 24;
    }
}
