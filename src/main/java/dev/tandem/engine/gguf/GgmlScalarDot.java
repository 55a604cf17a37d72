package dev.tandem.engine.gguf;

import static dev.tandem.engine.gguf.GgmlDotKernel.LANES;

/** {@link GgmlDotKernel} in plain Java: the eight lanes as an array, the same operations in the same order. */
final class GgmlScalarDot implements GgmlDotKernel {
    static final GgmlScalarDot INSTANCE = new GgmlScalarDot();

    private GgmlScalarDot() {}

    @Override
    public String describe() {
        return "scalar";
    }

    @Override
    public float blocks32(int[] q, float[] d, int[] y, float[] yd, int blocks) {
        float[] acc = new float[LANES];
        for (int b = 0; b < blocks; b++) {
            float scale = d[b] * yd[b];
            int o = b * 32;
            for (int k = 0; k < LANES; k++) {
                int p = q[o + k] * y[o + k]
                        + q[o + k + 8] * y[o + k + 8]
                        + q[o + k + 16] * y[o + k + 16]
                        + q[o + k + 24] * y[o + k + 24];
                acc[k] = Math.fma((float) p, scale, acc[k]);
            }
        }
        return GgmlDotKernel.sumLanes(acc);
    }

    @Override
    public float q4K(
            int[] q, float[] d, float[] dmin, int[] scale, int[] min, int[] y, float[] yd, int[] ysums, int blocks) {
        float[] acc = new float[LANES];
        float mins = 0;
        int[] lane = new int[LANES];
        for (int b = 0; b < blocks; b++) {
            java.util.Arrays.fill(lane, 0);
            int imin = 0;
            for (int s = 0; s < 8; s++) {
                int o = b * 256 + s * 32;
                int sc = scale[b * 8 + s];
                for (int k = 0; k < LANES; k++) {
                    int p = q[o + k] * y[o + k]
                            + q[o + k + 8] * y[o + k + 8]
                            + q[o + k + 16] * y[o + k + 16]
                            + q[o + k + 24] * y[o + k + 24];
                    lane[k] += sc * p;
                }
                int g = b * 8 + s;
                imin += min[g] * (ysums[2 * g] + ysums[2 * g + 1]);
            }
            float ds = d[b] * yd[b];
            for (int k = 0; k < LANES; k++) {
                acc[k] = Math.fma((float) lane[k], ds, acc[k]);
            }
            mins += dmin[b] * yd[b] * imin;
        }
        return GgmlDotKernel.sumLanes(acc) - mins;
    }

    @Override
    public float q6K(int[] q, float[] d, int[] scale, int[] y, float[] yd, int blocks) {
        float[] acc = new float[LANES];
        int[] lane = new int[LANES];
        for (int b = 0; b < blocks; b++) {
            java.util.Arrays.fill(lane, 0);
            for (int g = 0; g < 16; g++) {
                int o = b * 256 + g * 16;
                int sc = scale[b * 16 + g];
                for (int k = 0; k < LANES; k++) {
                    lane[k] += sc * (q[o + k] * y[o + k] + q[o + k + 8] * y[o + k + 8]);
                }
            }
            float ds = d[b] * yd[b];
            for (int k = 0; k < LANES; k++) {
                acc[k] = Math.fma((float) lane[k], ds, acc[k]);
            }
        }
        return GgmlDotKernel.sumLanes(acc);
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
