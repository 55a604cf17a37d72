package dev.tandem.engine.gguf;

import dev.tandem.engine.HalfFloats;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link GgmlDotKernel} with the Vector API: eight float lanes (256-bit vectors whatever the machine
 * offers, so the lanes are the plain kernel's), fused multiply-adds throughout. Loaded only when the
 * module is present.
 */
final class GgmlVectorDot implements GgmlDotKernel {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
    private static final VectorSpecies<Byte> B = ByteVector.SPECIES_64;
    private static final VectorSpecies<Byte> B128 = ByteVector.SPECIES_128;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_256;

    private GgmlVectorDot() {}

    static GgmlDotKernel create() {
        return new GgmlVectorDot();
    }

    @Override
    public String describe() {
        return "vector (256-bit)";
    }

    /** Lanes k of Σ_{i<n} q[o + 8i + k]·y[o + 8i + k]: a block's integer sum, exact. */
    private static FloatVector products(float[] q, float[] y, int o, int n) {
        FloatVector p = FloatVector.fromArray(F, q, o).mul(FloatVector.fromArray(F, y, o));
        for (int i = 1; i < n; i++) {
            p = FloatVector.fromArray(F, q, o + 8 * i).fma(FloatVector.fromArray(F, y, o + 8 * i), p);
        }
        return p;
    }

    private static float sum(FloatVector acc) {
        float[] lanes = new float[LANES];
        acc.intoArray(lanes, 0);
        return GgmlDotKernel.sumLanes(lanes);
    }

    @Override
    public float blocks32(float[] q, float[] d, float[] y, float[] yd, int blocks) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocks; b++) {
            acc = products(q, y, b * 32, 4).fma(FloatVector.broadcast(F, d[b] * yd[b]), acc);
        }
        return sum(acc);
    }

    @Override
    public float q8_0Row(byte[] row, float[] y, float[] yd, int blocks) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocks; b++) {
            int at = b * 34 + 2;
            int o = b * 32;
            FloatVector p = widen(row, at).mul(FloatVector.fromArray(F, y, o));
            for (int i = 1; i < 4; i++) {
                p = widen(row, at + 8 * i).fma(FloatVector.fromArray(F, y, o + 8 * i), p);
            }
            acc = p.fma(FloatVector.broadcast(F, HalfFloats.half(GgmlRowDot.int16(row, b * 34)) * yd[b]), acc);
        }
        return sum(acc);
    }

    /** Eight signed bytes as eight floats. */
    private static FloatVector widen(byte[] row, int at) {
        return (FloatVector) ByteVector.fromArray(B, row, at).convertShape(VectorOperators.B2F, F, 0);
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
        FloatVector acc = FloatVector.zero(F);
        float mins = 0;
        for (int b = 0; b < blocks; b++) {
            FloatVector lanes = FloatVector.zero(F);
            int imin = 0;
            for (int s = 0; s < 8; s++) {
                int g = b * 8 + s;
                lanes = products(q, y, b * 256 + s * 32, 4).fma(FloatVector.broadcast(F, scale[g]), lanes);
                imin += min[g] * (ysums[2 * g] + ysums[2 * g + 1]);
            }
            acc = lanes.fma(FloatVector.broadcast(F, d[b] * yd[b]), acc);
            mins += dmin[b] * yd[b] * imin;
        }
        return sum(acc) - mins;
    }

    @Override
    public float q6K(float[] q, float[] d, int[] scale, float[] y, float[] yd, int blocks) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocks; b++) {
            FloatVector lanes = FloatVector.zero(F);
            for (int g = 0; g < 16; g++) {
                lanes = products(q, y, b * 256 + g * 16, 2).fma(FloatVector.broadcast(F, scale[b * 16 + g]), lanes);
            }
            acc = lanes.fma(FloatVector.broadcast(F, d[b] * yd[b]), acc);
        }
        return sum(acc);
    }

    /** Eight bytes as eight ints 0..255. */
    private static IntVector unsigned(byte[] row, int at) {
        return ((IntVector) ByteVector.fromArray(B, row, at).convertShape(VectorOperators.B2I, I, 0)).and(0xFF);
    }

    @Override
    public void unpack(
            byte[] row, int lowAt, int lowShift, int highAt, int highShift, int bias, float[] q, int o, int n) {
        for (int i = 0; i < n; i += LANES) {
            IntVector v = unsigned(row, lowAt + i)
                    .lanewise(VectorOperators.LSHR, lowShift)
                    .and(0x0F);
            if (highAt >= 0) {
                v = v.or(unsigned(row, highAt + i)
                        .lanewise(VectorOperators.LSHR, highShift)
                        .and(3)
                        .lanewise(VectorOperators.LSHL, 4));
            }
            ((FloatVector) v.sub(bias).convert(VectorOperators.I2F, 0)).intoArray(q, o + i);
        }
    }

    private static final int[] BIT_INDEX = {
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
        30, 31
    };

    @Override
    public void unpackQ5(byte[] row, int at, float[] q, int o) {
        IntVector qh = IntVector.broadcast(I, GgmlRowDot.int32(row, at));
        for (int j = 0; j < 16; j += LANES) {
            IntVector v = unsigned(row, at + 4 + j);
            IntVector lowBits = qh.lanewise(VectorOperators.LSHR, IntVector.fromArray(I, BIT_INDEX, j))
                    .and(1)
                    .lanewise(VectorOperators.LSHL, 4);
            IntVector highBits = qh.lanewise(VectorOperators.LSHR, IntVector.fromArray(I, BIT_INDEX, j + 16))
                    .and(1)
                    .lanewise(VectorOperators.LSHL, 4);
            ((FloatVector) v.and(0x0F).or(lowBits).sub(16).convert(VectorOperators.I2F, 0)).intoArray(q, o + j);
            ((FloatVector) v.lanewise(VectorOperators.LSHR, 4)
                            .or(highBits)
                            .sub(16)
                            .convert(VectorOperators.I2F, 0))
                    .intoArray(q, o + j + 16);
        }
    }

    /**
     * Eight halves at a time by their bits: normal numbers rebias the exponent, infinities and NaNs keep
     * their payload, subnormals are their mantissa times 2^-24 (exact), the sign is put back last.
     */
    @Override
    public void halves(byte[] row, float[] out, int n, boolean bf16) {
        for (int j = 0; j < n; j += LANES) {
            IntVector h = ((IntVector) ByteVector.fromArray(B128, row, 2 * j)
                            .reinterpretAsShorts()
                            .convertShape(VectorOperators.S2I, I, 0))
                    .and(0xFFFF);
            IntVector bits;
            if (bf16) {
                bits = h.lanewise(VectorOperators.LSHL, 16);
            } else {
                IntVector em = h.and(0x7FFF);
                IntVector normal = em.lanewise(VectorOperators.LSHL, 13).add(0x38000000);
                IntVector special =
                        em.and(0x3FF).lanewise(VectorOperators.LSHL, 13).or(0x7F800000);
                IntVector tiny = ((FloatVector) em.convert(VectorOperators.I2F, 0))
                        .mul(0x1p-24f)
                        .reinterpretAsInts();
                bits = normal.blend(special, em.compare(VectorOperators.GE, 0x7C00))
                        .blend(tiny, em.compare(VectorOperators.LT, 0x400))
                        .or(h.and(0x8000).lanewise(VectorOperators.LSHL, 16));
            }
            bits.reinterpretAsFloats().intoArray(out, j);
        }
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
