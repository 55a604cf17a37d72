package dev.tandem.engine.gguf;

import dev.tandem.engine.HalfFloats;
import java.nio.ByteBuffer;

/**
 * Writers of Q5_0 (llama.cpp's {@code quantize_row_q5_0_ref}) and of valid Q4_K and Q6_K super-blocks.
 * The K-quants are packed exactly as llama.cpp lays them out, but their scales come from each group's
 * range, not from llama.cpp's search for the best scale: a file written here is read identically by
 * llama.cpp and Tandem, which is all the random models of tests and benchmarks need.
 */
final class GgmlBlockQuantize {
    private GgmlBlockQuantize() {}

    static void q5_0(float[] x, int at, ByteBuffer out) {
        float d = GgmlQuantize.signedMax(x, at) / -16;
        float id = d != 0 ? 1.0f / d : 0.0f;
        out.putShort(HalfFloats.toHalf(d));
        int qh = 0;
        byte[] qs = new byte[16];
        for (int j = 0; j < 16; j++) {
            int xi0 = Math.min(31, (byte) (int) (x[at + j] * id + 16.5f));
            int xi1 = Math.min(31, (byte) (int) (x[at + 16 + j] * id + 16.5f));
            qs[j] = (byte) ((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
            qh |= ((xi0 & 0x10) >>> 4) << j;
            qh |= ((xi1 & 0x10) >>> 4) << (j + 16);
        }
        out.putInt(qh);
        out.put(qs);
    }

    /** Eight groups of 32, each value = d·scale·q − dmin·min with 6-bit scales and mins and 4-bit q. */
    static void q4K(float[] x, int at, ByteBuffer out) {
        float[] scale = new float[8];
        float[] min = new float[8];
        for (int s = 0; s < 8; s++) {
            float lo = 0;
            float hi = 0;
            for (int j = 0; j < 32; j++) {
                lo = Math.min(lo, x[at + 32 * s + j]);
                hi = Math.max(hi, x[at + 32 * s + j]);
            }
            scale[s] = (hi - lo) / 15;
            min[s] = -lo;
        }
        float d = HalfFloats.half(HalfFloats.toHalf(max(scale) / 63));
        float dmin = HalfFloats.half(HalfFloats.toHalf(max(min) / 63));
        int[] ls = new int[8];
        int[] lm = new int[8];
        for (int s = 0; s < 8; s++) {
            ls[s] = d > 0 ? Math.min(63, Math.round(scale[s] / d)) : 0;
            lm[s] = dmin > 0 ? Math.min(63, Math.round(min[s] / dmin)) : 0;
        }
        out.putShort(HalfFloats.toHalf(d));
        out.putShort(HalfFloats.toHalf(dmin));
        byte[] sc = new byte[12];
        for (int j = 0; j < 8; j++) {
            if (j < 4) {
                sc[j] = (byte) ls[j];
                sc[j + 4] = (byte) lm[j];
            } else {
                sc[j + 4] = (byte) ((ls[j] & 0x0F) | ((lm[j] & 0x0F) << 4));
                sc[j - 4] |= (byte) ((ls[j] >>> 4) << 6);
                sc[j] |= (byte) ((lm[j] >>> 4) << 6);
            }
        }
        out.put(sc);
        int[] q = new int[256];
        for (int s = 0; s < 8; s++) {
            float step = d * ls[s];
            float offset = dmin * lm[s];
            for (int j = 0; j < 32; j++) {
                int v = step > 0 ? Math.round((x[at + 32 * s + j] + offset) / step) : 0;
                q[32 * s + j] = Math.max(0, Math.min(15, v));
            }
        }
        for (int c = 0; c < 4; c++) {
            for (int l = 0; l < 32; l++) {
                out.put((byte) (q[64 * c + l] | (q[64 * c + 32 + l] << 4)));
            }
        }
    }

    /** Sixteen groups of 16, each value = d·scale·(q − 32) with signed 8-bit scales and 6-bit q. */
    static void q6K(float[] x, int at, ByteBuffer out) {
        float[] scale = new float[16];
        float maxScale = 0;
        for (int g = 0; g < 16; g++) {
            float max = 0;
            for (int j = 0; j < 16; j++) {
                float v = x[at + 16 * g + j];
                if (Math.abs(v) > Math.abs(max)) {
                    max = v;
                }
            }
            scale[g] = max / -32;
            if (Math.abs(scale[g]) > Math.abs(maxScale)) {
                maxScale = scale[g];
            }
        }
        float iscale = maxScale != 0 ? -128.0f / maxScale : 0;
        float d = HalfFloats.half(HalfFloats.toHalf(iscale != 0 ? 1 / iscale : 0));
        int[] q = new int[256];
        byte[] sc = new byte[16];
        for (int g = 0; g < 16; g++) {
            sc[g] = (byte) Math.max(-128, Math.min(127, Math.round(iscale * scale[g])));
            float step = d * sc[g];
            for (int j = 0; j < 16; j++) {
                int v = step != 0 ? Math.round(x[at + 16 * g + j] / step) : 0;
                q[16 * g + j] = Math.max(-32, Math.min(31, v)) + 32;
            }
        }
        byte[] ql = new byte[128];
        byte[] qh = new byte[64];
        for (int n = 0; n < 2; n++) {
            for (int l = 0; l < 32; l++) {
                int q1 = q[128 * n + l];
                int q2 = q[128 * n + l + 32];
                int q3 = q[128 * n + l + 64];
                int q4 = q[128 * n + l + 96];
                ql[64 * n + l] = (byte) ((q1 & 0x0F) | ((q3 & 0x0F) << 4));
                ql[64 * n + l + 32] = (byte) ((q2 & 0x0F) | ((q4 & 0x0F) << 4));
                qh[32 * n + l] = (byte) ((q1 >>> 4) | ((q2 >>> 4) << 2) | ((q3 >>> 4) << 4) | ((q4 >>> 4) << 6));
            }
        }
        out.put(ql);
        out.put(qh);
        out.put(sc);
        out.putShort(HalfFloats.toHalf(d));
    }

    private static float max(float[] v) {
        float m = 0;
        for (float f : v) {
            m = Math.max(m, f);
        }
        return m;
    }
}
