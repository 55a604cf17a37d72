package dev.tandem.engine.reference;

import static dev.tandem.engine.reference.TransformerMath.BLOCK_ROWS;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link TransformerMath#matmulBlocks} with the Vector API, blocked in registers: for a strip of two
 * vectors of rows, the sums of up to eight sequences stay in registers across all n columns, each weight
 * vector is loaded once for all of them, and each sum is stored once. C2 vectorizes the plain loops one
 * sequence at a time only (re-loading every weight per sequence and every sum per eight columns), and
 * does not vectorize them blocked over sequences.
 *
 * <p>Bit-identical: every sum starts at 0 and adds w[j]·x[j] for j = 0, 1, … in order, a rounded
 * multiply then a rounded add (never fma), as the scalar loops do. Loaded only when the module is
 * present (see {@link MatmulKernel#select}).
 */
final class VectorMatmul implements MatmulKernel {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final int V = S.length();

    private VectorMatmul() {}

    /** The kernel, or null with vectors under 256 bits: there plain loops do as well. */
    static MatmulKernel create() {
        return S.vectorBitSize() >= 256 ? new VectorMatmul() : null;
    }

    @Override
    public String describe() {
        return "vector (" + S.vectorBitSize() + "-bit)";
    }

    /**
     * Each block of {@link TransformerMath#BLOCK_ROWS} rows as strips of 2V rows, a strip's n columns one
     * after the other: part[s][j · 2V + t] = W[i0 + s · 2V + t][j]. A strip is then one run of memory,
     * which the prefetcher follows; the column layout made a strip n runs 8 KiB apart, and the product
     * ran a third slower than the plain loops once the matrix was out of cache. Rows past the last whole
     * strip form a narrower last part, laid out the same way.
     */
    @Override
    public float[][][] pack(float[] w, int d, int n) {
        float[][][] blocks = new float[(d + BLOCK_ROWS - 1) / BLOCK_ROWS][][];
        for (int k = 0; k < blocks.length; k++) {
            int i0 = k * BLOCK_ROWS;
            int rows = Math.min(BLOCK_ROWS, d - i0);
            int strips = rows / (2 * V);
            int tail = rows - strips * 2 * V;
            float[][] parts = new float[strips + (tail > 0 ? 1 : 0)][];
            for (int s = 0; s < parts.length; s++) {
                int width = s < strips ? 2 * V : tail;
                float[] part = new float[n * width];
                for (int t = 0; t < width; t++) {
                    int row = (i0 + s * 2 * V + t) * n;
                    for (int j = 0; j < n; j++) {
                        part[j * width + t] = w[row + j];
                    }
                }
                parts[s] = part;
            }
            blocks[k] = parts;
        }
        return blocks;
    }

    /** A strip: ranges may split a block between strips (BLOCK_ROWS is a multiple of 2V). */
    @Override
    public int rowUnit() {
        return 2 * V;
    }

    @Override
    public void matmulBlocks(float[][] out, float[][] x, float[][][] blocks, int n, int r0, int r1, int batch) {
        for (int k = r0 / BLOCK_ROWS; k * BLOCK_ROWS < r1; k++) {
            float[][] parts = blocks[k];
            int first = Math.max(0, r0 - k * BLOCK_ROWS) / (2 * V);
            for (int s = first; s < parts.length && k * BLOCK_ROWS + s * 2 * V < r1; s++) {
                float[] p = parts[s];
                int at = k * BLOCK_ROWS + s * 2 * V;
                if (p.length != 2 * V * n) {
                    tail(out, x, batch, p, n, p.length / n, at);
                    continue;
                }
                // the strip (n · 2V floats) stays in L1/L2 while the groups of sequences pass over it
                int b = 0;
                for (; b + 8 <= batch; b += 8) {
                    strip8(out, x, b, p, n, at);
                }
                if (b + 4 <= batch) {
                    strip4(out, x, b, p, n, at);
                    b += 4;
                }
                if (b + 2 <= batch) {
                    strip2(out, x, b, p, n, at);
                    b += 2;
                }
                if (b < batch) {
                    strip1(out[b], x[b], p, n, at);
                }
            }
        }
    }

    /** The last rows of a block, fewer than a strip: one sum at a time, in j order. */
    private static void tail(float[][] out, float[][] x, int batch, float[] p, int n, int width, int at) {
        for (int t = 0; t < width; t++) {
            for (int b = 0; b < batch; b++) {
                float[] xb = x[b];
                float s = 0.0f;
                for (int j = 0; j < n; j++) {
                    s += p[j * width + t] * xb[j];
                }
                out[b][at + t] = s;
            }
        }
    }

    /**
     * A strip's rows for sequences b..b+7: 16 sums in registers (of 32), each weight vector loaded once for
     * eight sequences — half the strip's passes through L2 of two groups of four.
     */
    private static void strip8(float[][] out, float[][] x, int b, float[] p, int n, int at) {
        float[] x0 = x[b];
        float[] x1 = x[b + 1];
        float[] x2 = x[b + 2];
        float[] x3 = x[b + 3];
        float[] x4 = x[b + 4];
        float[] x5 = x[b + 5];
        float[] x6 = x[b + 6];
        float[] x7 = x[b + 7];
        FloatVector lo0 = FloatVector.zero(S);
        FloatVector hi0 = lo0;
        FloatVector lo1 = lo0;
        FloatVector hi1 = lo0;
        FloatVector lo2 = lo0;
        FloatVector hi2 = lo0;
        FloatVector lo3 = lo0;
        FloatVector hi3 = lo0;
        FloatVector lo4 = lo0;
        FloatVector hi4 = lo0;
        FloatVector lo5 = lo0;
        FloatVector hi5 = lo0;
        FloatVector lo6 = lo0;
        FloatVector hi6 = lo0;
        FloatVector lo7 = lo0;
        FloatVector hi7 = lo0;
        for (int j = 0, i = 0; j < n; j++, i += 2 * V) {
            FloatVector lo = FloatVector.fromArray(S, p, i);
            FloatVector hi = FloatVector.fromArray(S, p, i + V);
            float s = x0[j];
            lo0 = lo0.add(lo.mul(s));
            hi0 = hi0.add(hi.mul(s));
            s = x1[j];
            lo1 = lo1.add(lo.mul(s));
            hi1 = hi1.add(hi.mul(s));
            s = x2[j];
            lo2 = lo2.add(lo.mul(s));
            hi2 = hi2.add(hi.mul(s));
            s = x3[j];
            lo3 = lo3.add(lo.mul(s));
            hi3 = hi3.add(hi.mul(s));
            s = x4[j];
            lo4 = lo4.add(lo.mul(s));
            hi4 = hi4.add(hi.mul(s));
            s = x5[j];
            lo5 = lo5.add(lo.mul(s));
            hi5 = hi5.add(hi.mul(s));
            s = x6[j];
            lo6 = lo6.add(lo.mul(s));
            hi6 = hi6.add(hi.mul(s));
            s = x7[j];
            lo7 = lo7.add(lo.mul(s));
            hi7 = hi7.add(hi.mul(s));
        }
        lo0.intoArray(out[b], at);
        hi0.intoArray(out[b], at + V);
        lo1.intoArray(out[b + 1], at);
        hi1.intoArray(out[b + 1], at + V);
        lo2.intoArray(out[b + 2], at);
        hi2.intoArray(out[b + 2], at + V);
        lo3.intoArray(out[b + 3], at);
        hi3.intoArray(out[b + 3], at + V);
        lo4.intoArray(out[b + 4], at);
        hi4.intoArray(out[b + 4], at + V);
        lo5.intoArray(out[b + 5], at);
        hi5.intoArray(out[b + 5], at + V);
        lo6.intoArray(out[b + 6], at);
        hi6.intoArray(out[b + 6], at + V);
        lo7.intoArray(out[b + 7], at);
        hi7.intoArray(out[b + 7], at + V);
    }

    /** A strip's rows for sequences b..b+3, into out[b..b+3][at, at + 2V). */
    private static void strip4(float[][] out, float[][] x, int b, float[] p, int n, int at) {
        float[] x0 = x[b];
        float[] x1 = x[b + 1];
        float[] x2 = x[b + 2];
        float[] x3 = x[b + 3];
        FloatVector lo0 = FloatVector.zero(S);
        FloatVector hi0 = lo0;
        FloatVector lo1 = lo0;
        FloatVector hi1 = lo0;
        FloatVector lo2 = lo0;
        FloatVector hi2 = lo0;
        FloatVector lo3 = lo0;
        FloatVector hi3 = lo0;
        for (int j = 0, i = 0; j < n; j++, i += 2 * V) {
            FloatVector lo = FloatVector.fromArray(S, p, i);
            FloatVector hi = FloatVector.fromArray(S, p, i + V);
            float s = x0[j];
            lo0 = lo0.add(lo.mul(s));
            hi0 = hi0.add(hi.mul(s));
            s = x1[j];
            lo1 = lo1.add(lo.mul(s));
            hi1 = hi1.add(hi.mul(s));
            s = x2[j];
            lo2 = lo2.add(lo.mul(s));
            hi2 = hi2.add(hi.mul(s));
            s = x3[j];
            lo3 = lo3.add(lo.mul(s));
            hi3 = hi3.add(hi.mul(s));
        }
        lo0.intoArray(out[b], at);
        hi0.intoArray(out[b], at + V);
        lo1.intoArray(out[b + 1], at);
        hi1.intoArray(out[b + 1], at + V);
        lo2.intoArray(out[b + 2], at);
        hi2.intoArray(out[b + 2], at + V);
        lo3.intoArray(out[b + 3], at);
        hi3.intoArray(out[b + 3], at + V);
    }

    /** A strip's rows for sequences b and b+1. */
    private static void strip2(float[][] out, float[][] x, int b, float[] p, int n, int at) {
        float[] x0 = x[b];
        float[] x1 = x[b + 1];
        FloatVector lo0 = FloatVector.zero(S);
        FloatVector hi0 = lo0;
        FloatVector lo1 = lo0;
        FloatVector hi1 = lo0;
        for (int j = 0, i = 0; j < n; j++, i += 2 * V) {
            FloatVector lo = FloatVector.fromArray(S, p, i);
            FloatVector hi = FloatVector.fromArray(S, p, i + V);
            float s = x0[j];
            lo0 = lo0.add(lo.mul(s));
            hi0 = hi0.add(hi.mul(s));
            s = x1[j];
            lo1 = lo1.add(lo.mul(s));
            hi1 = hi1.add(hi.mul(s));
        }
        lo0.intoArray(out[b], at);
        hi0.intoArray(out[b], at + V);
        lo1.intoArray(out[b + 1], at);
        hi1.intoArray(out[b + 1], at + V);
    }

    /** A strip's rows for one sequence. */
    private static void strip1(float[] out, float[] x, float[] p, int n, int at) {
        FloatVector lo0 = FloatVector.zero(S);
        FloatVector hi0 = lo0;
        for (int j = 0, i = 0; j < n; j++, i += 2 * V) {
            float s = x[j];
            lo0 = lo0.add(FloatVector.fromArray(S, p, i).mul(s));
            hi0 = hi0.add(FloatVector.fromArray(S, p, i + V).mul(s));
        }
        lo0.intoArray(out, at);
        hi0.intoArray(out, at + V);
    }
}
