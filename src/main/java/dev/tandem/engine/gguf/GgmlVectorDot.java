package dev.tandem.engine.gguf;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link GgmlDotKernel} with the Vector API: eight int lanes for a block's integer sums, eight float
 * lanes for the scaled sums (256-bit vectors whatever the machine offers, so the lanes are the plain
 * kernel's). Loaded only when the module is present.
 */
final class GgmlVectorDot implements GgmlDotKernel {
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_256;
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_256;

    private GgmlVectorDot() {}

    static GgmlDotKernel create() {
        return new GgmlVectorDot();
    }

    @Override
    public String describe() {
        return "vector (256-bit)";
    }

    /** Lanes k of Σ_{i<n} q[o + 8i + k]·y[o + 8i + k]. */
    private static IntVector products(int[] q, int[] y, int o, int n) {
        IntVector p = IntVector.fromArray(I, q, o).mul(IntVector.fromArray(I, y, o));
        for (int i = 1; i < n; i++) {
            p = p.add(IntVector.fromArray(I, q, o + 8 * i).mul(IntVector.fromArray(I, y, o + 8 * i)));
        }
        return p;
    }

    private static float sum(FloatVector acc) {
        float[] lanes = new float[LANES];
        acc.intoArray(lanes, 0);
        return GgmlDotKernel.sumLanes(lanes);
    }

    private static FloatVector scaled(IntVector lanes, float scale, FloatVector acc) {
        FloatVector f = (FloatVector) lanes.convert(VectorOperators.I2F, 0);
        return f.fma(FloatVector.broadcast(F, scale), acc);
    }

    @Override
    public float blocks32(int[] q, float[] d, int[] y, float[] yd, int blocks) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocks; b++) {
            acc = scaled(products(q, y, b * 32, 4), d[b] * yd[b], acc);
        }
        return sum(acc);
    }

    @Override
    public float q4K(
            int[] q, float[] d, float[] dmin, int[] scale, int[] min, int[] y, float[] yd, int[] ysums, int blocks) {
        FloatVector acc = FloatVector.zero(F);
        float mins = 0;
        for (int b = 0; b < blocks; b++) {
            IntVector lane = IntVector.zero(I);
            int imin = 0;
            for (int s = 0; s < 8; s++) {
                int g = b * 8 + s;
                lane = lane.add(products(q, y, b * 256 + s * 32, 4).mul(scale[g]));
                imin += min[g] * (ysums[2 * g] + ysums[2 * g + 1]);
            }
            acc = scaled(lane, d[b] * yd[b], acc);
            mins += dmin[b] * yd[b] * imin;
        }
        return sum(acc) - mins;
    }

    @Override
    public float q6K(int[] q, float[] d, int[] scale, int[] y, float[] yd, int blocks) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocks; b++) {
            IntVector lane = IntVector.zero(I);
            for (int g = 0; g < 16; g++) {
                lane = lane.add(products(q, y, b * 256 + g * 16, 2).mul(scale[b * 16 + g]));
            }
            acc = scaled(lane, d[b] * yd[b], acc);
        }
        return sum(acc);
    }

    @Override
    public float floats(float[] w, float[] x, int n) {
        FloatVector acc = FloatVector.zero(F);
        for (int j = 0; j < n; j += LANES) {
            acc = FloatVector.fromArray(F, w, j).fma(FloatVector.fromArray(F, x, j), acc);
        }
        return sum(acc);
    }
}
