package dev.tandem.engine.gguf;

import static dev.tandem.engine.gguf.GgmlDotKernel.LANES;

import dev.tandem.engine.HalfFloats;

/** {@link GgmlDotKernel} in plain Java: the eight lanes as an array, the same operations in the same order. */
final class GgmlScalarDot implements GgmlDotKernel {
    static final GgmlScalarDot INSTANCE = new GgmlScalarDot();

    private GgmlScalarDot() {}

    @Override
    public String describe() {
        return "scalar";
    }

    /** Lane k of a block's integer sum: Σ_{i<n} q[o + 8i + k]·y[o + 8i + k], exact. */
    private static float lane(float[] q, float[] y, int o, int k, int n) {
        float p = 0;
        for (int i = 0; i < n; i++) {
            p = Math.fma(q[o + 8 * i + k], y[o + 8 * i + k], p);
        }
        return p;
    }

    @Override
    public float blocks32(float[] q, float[] d, float[] y, float[] yd, int blocks) {
        float[] acc = new float[LANES];
        for (int b = 0; b < blocks; b++) {
            float scale = d[b] * yd[b];
            for (int k = 0; k < LANES; k++) {
                acc[k] = Math.fma(lane(q, y, b * 32, k, 4), scale, acc[k]);
            }
        }
        return GgmlDotKernel.sumLanes(acc);
    }

    @Override
    public float q8_0Row(byte[] row, float[] y, float[] yd, int blocks) {
        float[] acc = new float[LANES];
        for (int b = 0; b < blocks; b++) {
            int at = b * 34;
            float scale = HalfFloats.half(GgmlRowDot.int16(row, at)) * yd[b];
            for (int k = 0; k < LANES; k++) {
                float p = 0;
                for (int i = 0; i < 4; i++) {
                    p = Math.fma(row[at + 2 + 8 * i + k], y[b * 32 + 8 * i + k], p);
                }
                acc[k] = Math.fma(p, scale, acc[k]);
            }
        }
        return GgmlDotKernel.sumLanes(acc);
    }

    @Override
    public float q4K(
            float[] q,
            float[] d,
            float[] dmin,
            int[] scale,
            int[] min,
            float[] y,
            float[] yd,
            int[] ysums,
            int blocks) {
        float[] acc = new float[LANES];
        float mins = 0;
        float[] lanes = new float[LANES];
        for (int b = 0; b < blocks; b++) {
            java.util.Arrays.fill(lanes, 0);
            int imin = 0;
            for (int s = 0; s < 8; s++) {
                int g = b * 8 + s;
                for (int k = 0; k < LANES; k++) {
                    lanes[k] = Math.fma(lane(q, y, b * 256 + s * 32, k, 4), scale[g], lanes[k]);
                }
                imin += min[g] * (ysums[2 * g] + ysums[2 * g + 1]);
            }
            float ds = d[b] * yd[b];
            for (int k = 0; k < LANES; k++) {
                acc[k] = Math.fma(lanes[k], ds, acc[k]);
            }
            mins += dmin[b] * yd[b] * imin;
        }
        return GgmlDotKernel.sumLanes(acc) - mins;
    }

    @Override
    public float q6K(float[] q, float[] d, int[] scale, float[] y, float[] yd, int blocks) {
        float[] acc = new float[LANES];
        float[] lanes = new float[LANES];
        for (int b = 0; b < blocks; b++) {
            java.util.Arrays.fill(lanes, 0);
            for (int g = 0; g < 16; g++) {
                for (int k = 0; k < LANES; k++) {
                    lanes[k] = Math.fma(lane(q, y, b * 256 + g * 16, k, 2), scale[b * 16 + g], lanes[k]);
                }
            }
            float ds = d[b] * yd[b];
            for (int k = 0; k < LANES; k++) {
                acc[k] = Math.fma(lanes[k], ds, acc[k]);
            }
        }
        return GgmlDotKernel.sumLanes(acc);
    }

    @Override
    public void unpack(
            byte[] row, int lowAt, int lowShift, int highAt, int highShift, int bias, float[] q, int o, int n) {
        for (int i = 0; i < n; i++) {
            int v = ((row[lowAt + i] & 0xFF) >>> lowShift) & 0x0F;
            if (highAt >= 0) {
                v |= (((row[highAt + i] & 0xFF) >>> highShift) & 3) << 4;
            }
            q[o + i] = v - bias;
        }
    }

    @Override
    public void unpackQ5(byte[] row, int at, float[] q, int o) {
        int qh = GgmlRowDot.int32(row, at);
        for (int j = 0; j < 16; j++) {
            int v = row[at + 4 + j] & 0xFF;
            q[o + j] = ((v & 0x0F) | (((qh >>> j) & 1) << 4)) - 16;
            q[o + j + 16] = ((v >>> 4) | (((qh >>> (j + 16)) & 1) << 4)) - 16;
        }
    }

    @Override
    public void halves(byte[] row, float[] out, int n, boolean bf16) {
        for (int j = 0; j < n; j++) {
            short h = GgmlRowDot.int16(row, 2 * j);
            out[j] = bf16 ? HalfFloats.bfloat16(h) : HalfFloats.half(h);
        }
    }

    @Override
    public float floats(float[] w, float[] x, int n) {
        float[] acc = new float[LANES];
        for (int j = 0; j < n; j += LANES) {
            for (int k = 0; k < LANES; k++) {
                acc[k] = Math.fma(w[j + k], x[j + k], acc[k]);
            }
        }
        return GgmlDotKernel.sumLanes(acc);
    }
}
