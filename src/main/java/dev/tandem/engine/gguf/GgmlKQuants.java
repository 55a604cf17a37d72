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
                for (int l = 0; l < 32; l++) {
                    int v = row[qs + 32 * c + l] & 0xFF;
                    q[k * 256 + 64 * c + l] = v & 0x0F;
                    q[k * 256 + 64 * c + 32 + l] = v >>> 4;
                }
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
                for (int l = 0; l < 32; l++) {
                    int low0 = row[ql + l] & 0xFF;
                    int low32 = row[ql + l + 32] & 0xFF;
                    int high = row[qh + l] & 0xFF;
                    q[o + l] = ((low0 & 0x0F) | ((high & 3) << 4)) - 32;
                    q[o + l + 32] = ((low32 & 0x0F) | (((high >>> 2) & 3) << 4)) - 32;
                    q[o + l + 64] = ((low0 >>> 4) | (((high >>> 4) & 3) << 4)) - 32;
                    q[o + l + 96] = ((low32 >>> 4) | (((high >>> 6) & 3) << 4)) - 32;
                }
            }
        }
    }
}
