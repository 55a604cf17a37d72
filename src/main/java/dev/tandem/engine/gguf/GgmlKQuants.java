package dev.tandem.engine.gguf;

import dev.tandem.engine.HalfFloats;

/**
 * The K-quant super-blocks of 256 unpacked into their integer parts, in element order: what the dot
 * products multiply before any float scale is applied (see {@link GgmlDequant} for the same layouts
 * expanded to floats).
 */
final class GgmlKQuants {
    private GgmlKQuants() {}

    /**
     * Q4_K blocks of {@code row}: d and dmin per block, a 6-bit scale and min per 32 elements, each
     * element's nibble (0..15); the value is d·scale·q − dmin·min.
     */
    static void unpackQ4K(byte[] row, float[] d, float[] dmin, int[] scale, int[] min, float[] q) {
        int bb = GgmlType.Q4_K.blockBytes();
        for (int k = 0; k < d.length; k++) {
            int at = k * bb;
            d[k] = HalfFloats.half(GgmlRowDot.int16(row, at));
            dmin[k] = HalfFloats.half(GgmlRowDot.int16(row, at + 2));
            int sc = at + 4;
            for (int j = 0; j < 8; j++) {
                scale[k * 8 + j] = scale(row, sc, j);
                min[k * 8 + j] = min(row, sc, j);
            }
            int qs = at + 16;
            for (int c = 0; c < 4; c++) {
                GgmlDotKernel.ACTIVE.unpack(row, qs + 32 * c, 0, -1, 0, 0, q, k * 256 + 64 * c, 32);
                GgmlDotKernel.ACTIVE.unpack(row, qs + 32 * c, 4, -1, 0, 0, q, k * 256 + 64 * c + 32, 32);
            }
        }
    }

    /** {@code get_scale_min_k4}'s scale: 6 bits, the upper four's high bits borrowed from the first bytes. */
    static int scale(byte[] x, int sc, int j) {
        if (j < 4) {
            return x[sc + j] & 63;
        }
        return (x[sc + j + 4] & 0x0F) | (((x[sc + j - 4] & 0xFF) >>> 6) << 4);
    }

    /** {@code get_scale_min_k4}'s min. */
    static int min(byte[] x, int sc, int j) {
        if (j < 4) {
            return x[sc + j + 4] & 63;
        }
        return ((x[sc + j + 4] & 0xFF) >>> 4) | (((x[sc + j] & 0xFF) >>> 6) << 4);
    }

    /** Q6_K blocks of {@code row}: d per block, a signed 8-bit scale per 16 elements, each element −32..31. */
    static void unpackQ6K(byte[] row, float[] d, int[] scale, float[] q) {
        int bb = GgmlType.Q6_K.blockBytes();
        for (int k = 0; k < d.length; k++) {
            int at = k * bb;
            d[k] = HalfFloats.half(GgmlRowDot.int16(row, at + 208));
            for (int g = 0; g < 16; g++) {
                scale[k * 16 + g] = row[at + 192 + g];
            }
            for (int n = 0; n < 2; n++) {
                int ql = at + 64 * n;
                int qh = at + 128 + 32 * n;
                int o = k * 256 + 128 * n;
                GgmlDotKernel k6 = GgmlDotKernel.ACTIVE;
                k6.unpack(row, ql, 0, qh, 0, 32, q, o, 32);
                k6.unpack(row, ql + 32, 0, qh, 2, 32, q, o + 32, 32);
                k6.unpack(row, ql, 4, qh, 4, 32, q, o + 64, 32);
                k6.unpack(row, ql + 32, 4, qh, 6, 32, q, o + 96, 32);
            }
        }
    }
}
