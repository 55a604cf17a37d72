package dev.tandem.engine.reference;

import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;
import dev.tandem.engine.StrictExp;

/**
 * The building blocks of the llama forward pass, written to give the same float results as
 * llama2.c's run.c: every sum is accumulated in float in index order, and transcendental functions
 * are evaluated in double by StrictMath then rounded to float, so results are identical in every JVM
 * (the KV a prefill worker computes must be bit-compatible with the decode worker's).
 *
 * <p>Against run.c built with correctly rounded expf/sinf/cosf/powf the logits are bit-identical.
 * glibc's expf, sinf and cosf are one ulp off for a small fraction of inputs, which moves run.c's
 * logits by ~1e-6; greedy tokens came out the same in every comparison made.
 */
public final class TransformerMath {

    private TransformerMath() {}

    /**
     * out[o + j] = weight[w + j] · (x[xo + j] / sqrt(Σ x² / size + 1e-5)), with run.c's exact operation
     * order. {@code out} may alias {@code x}.
     */
    public static void rmsnorm(float[] out, int o, float[] x, int xo, float[] weight, int w, int size) {
        float ss = 0.0f;
        for (int j = 0; j < size; j++) {
            ss += x[xo + j] * x[xo + j];
        }
        ss /= size;
        ss += 1e-5f;
        ss = 1.0f / sqrtf(ss);
        for (int j = 0; j < size; j++) {
            out[o + j] = weight[w + j] * (ss * x[xo + j]);
        }
    }

    /**
     * out[i] = Σ_j w[i·n + j] · x[j] for i < d, the plain row-major form of run.c's matmul: the
     * specification {@link #matmulBlocks} is held to.
     */
    public static void matmul(float[] out, float[] x, float[] w, int n, int d) {
        for (int i = 0; i < d; i++) {
            float s = 0.0f;
            for (int j = 0; j < n; j++) {
                s += w[i * n + j] * x[j];
            }
            out[i] = s;
        }
    }

    /**
     * Rows computed together by {@link #matmulBlocks}: their sums (8 KiB per sequence) stay in L1 while the
     * block's columns stream past, each an 8 KiB run of memory. Measured on stories15M's shape (2 cores):
     * one stream decodes 1.5× faster with blocks of 2048 rows than of 128 (longer runs for the
     * prefetcher), batches of 16 about the same.
     */
    public static final int BLOCK_ROWS = 2048;

    /**
     * The row-major d × n matrix w in blocks of {@link #BLOCK_ROWS} rows, each block as its columns:
     * blocks[k][j][r] = w[(128k + r)·n + j] (the last block has the rows that are left). A block's columns
     * are allocated one after the other, so {@link #matmulBlocks} reads the matrix front to back — it
     * streams through memory the way run.c's rows do — while its sums run across rows, as vectors.
     */
    public static float[][][] rowBlocks(float[] w, int d, int n) {
        float[][][] blocks = new float[(d + BLOCK_ROWS - 1) / BLOCK_ROWS][][];
        for (int k = 0; k < blocks.length; k++) {
            int i0 = k * BLOCK_ROWS;
            int rows = Math.min(BLOCK_ROWS, d - i0);
            float[][] cols = new float[n][rows];
            for (int r = 0; r < rows; r++) {
                int row = (i0 + r) * n;
                for (int j = 0; j < n; j++) {
                    cols[j][r] = w[row + j];
                }
            }
            blocks[k] = cols;
        }
        return blocks;
    }

    /**
     * A batch of matrix-vector products sharing one matrix given as {@link #rowBlocks}: out[b][i] =
     * Σ_j W[i][j] · x[b][j] for i < d, b < batch.
     *
     * <p>Each out[b][i] starts at 0 and adds W[i][j] · x[b][j] for j = 0, 1, … in order, in float: the
     * very operations of run.c's row dot product, so results are bit-identical to {@link #matmul} and do
     * not depend on the batch. A block's rows are independent sums, which the JIT computes as vectors
     * (every array of the inner loop is indexed alike); eight columns are read per pass ((((a + c0·x0) +
     * c1·x1) + …) + c7·x7 is still the j-order sum, with an eighth of the loads and stores of a), and
     * every sequence of the batch uses them while they are in L1, which is what makes batched decode
     * cheaper per token.
     */
    public static void matmulBlocks(float[][] out, float[][] x, float[][][] blocks, int n, int d, int batch) {
        matmulBlocks(out, x, blocks, n, 0, d, batch);
    }

    /**
     * {@link #matmulBlocks(float[][], float[][], float[][][], int, int, int)} for output rows
     * {@code [r0, r1)} only (both on block boundaries, or r1 = d): rows are independent, so ranges may be
     * computed on different threads with the same results.
     */
    static void matmulBlocks(float[][] out, float[][] x, float[][][] blocks, int n, int r0, int r1, int batch) {
        float[][] acc = new float[batch][BLOCK_ROWS];
        for (int k = r0 / BLOCK_ROWS; k * BLOCK_ROWS < r1; k++) {
            float[][] cols = blocks[k];
            int rows = cols[0].length;
            for (int b = 0; b < batch; b++) {
                java.util.Arrays.fill(acc[b], 0.0f);
            }
            int j = 0;
            for (; j + 8 <= n; j += 8) {
                float[] c0 = cols[j];
                float[] c1 = cols[j + 1];
                float[] c2 = cols[j + 2];
                float[] c3 = cols[j + 3];
                float[] c4 = cols[j + 4];
                float[] c5 = cols[j + 5];
                float[] c6 = cols[j + 6];
                float[] c7 = cols[j + 7];
                for (int b = 0; b < batch; b++) {
                    float[] xb = x[b];
                    float x0 = xb[j];
                    float x1 = xb[j + 1];
                    float x2 = xb[j + 2];
                    float x3 = xb[j + 3];
                    float x4 = xb[j + 4];
                    float x5 = xb[j + 5];
                    float x6 = xb[j + 6];
                    float x7 = xb[j + 7];
                    float[] a = acc[b];
                    for (int r = 0; r < rows; r++) {
                        a[r] = a[r]
                                + c0[r] * x0
                                + c1[r] * x1
                                + c2[r] * x2
                                + c3[r] * x3
                                + c4[r] * x4
                                + c5[r] * x5
                                + c6[r] * x6
                                + c7[r] * x7;
                    }
                }
            }
            for (; j < n; j++) {
                float[] c = cols[j];
                for (int b = 0; b < batch; b++) {
                    float xj = x[b][j];
                    float[] a = acc[b];
                    for (int r = 0; r < rows; r++) {
                        a[r] += c[r] * xj;
                    }
                }
            }
            for (int b = 0; b < batch; b++) {
                System.arraycopy(acc[b], 0, out[b], k * BLOCK_ROWS, rows);
            }
        }
    }

    /**
     * RoPE angles for {@code pos}: cos/sin of pos · 10000^(−i / headSize) for i = 0, 2, …, headSize − 2,
     * computed as run.c does in float (freq = 1 / powf(10000, i / (float) headSize), val = pos · freq).
     */
    public static void ropeAngles(int pos, int headSize, float[] cos, float[] sin, int o) {
        for (int i = 0; i < headSize; i += 2) {
            float freq = 1.0f / (float) StrictMath.pow(10000.0, i / (float) headSize);
            float val = pos * freq;
            cos[o + i / 2] = (float) StrictMath.cos(val);
            sin[o + i / 2] = (float) StrictMath.sin(val);
        }
    }

    /** Rotates each pair (v[2m], v[2m+1]) of {@code size} floats at {@code vo} by its head-local angle. */
    public static void rope(float[] v, int vo, int size, int headSize, float[] cos, float[] sin, int co) {
        for (int i = 0; i < size; i += 2) {
            int a = co + (i % headSize) / 2;
            float fcr = cos[a];
            float fci = sin[a];
            float v0 = v[vo + i];
            float v1 = v[vo + i + 1];
            v[vo + i] = v0 * fcr - v1 * fci;
            v[vo + i + 1] = v0 * fci + v1 * fcr;
        }
    }

    /** In place, over x[o, o + size): max-subtracted, float sums as in run.c. */
    public static void softmax(float[] x, int o, int size) {
        float max = x[o];
        for (int i = 1; i < size; i++) {
            if (x[o + i] > max) {
                max = x[o + i];
            }
        }
        float sum = 0.0f;
        for (int i = 0; i < size; i++) {
            x[o + i] = expf(x[o + i] - max);
            sum += x[o + i];
        }
        for (int i = 0; i < size; i++) {
            x[o + i] /= sum;
        }
    }

    /** silu(a) · b element-wise into a: a / (1 + e^−a) written as run.c does. */
    public static void swiglu(float[] a, float[] b, int o, int size) {
        for (int i = o; i < o + size; i++) {
            float h = a[i];
            h = h * (1.0f / (1.0f + expf(-h)));
            a[i] = h * b[i];
        }
    }

    public static float silu(float a) {
        return a * (1.0f / (1.0f + expf(-a)));
    }

    /**
     * One attention head at position {@code pos}: scores q·k_t / sqrt(headSize) for t = 0..pos against
     * the cached keys of KV head {@code kvHead} in {@code layer}, softmax, then the weighted sum of the
     * cached values into out[oo, oo + headSize). {@code att} is scratch of at least pos + 1 floats.
     */
    public static void attentionHead(
            float[] q, int qo, KvCache cache, int layer, int kvHead, int pos, float[] att, float[] out, int oo) {
        KvLayout layout = cache.layout();
        int headSize = layout.headDim();
        int kvDim = layout.kvDim();
        int blockSize = layout.blockSize();
        int headOffset = kvHead * headSize;
        scores(q, qo, cache, layer, headOffset, pos, att, 0);
        softmax(att, 0, pos + 1);
        for (int i = 0; i < headSize; i++) {
            out[oo + i] = 0.0f;
        }
        for (int t0 = 0; t0 <= pos; t0 += blockSize) {
            float[] block = cache.blockFor(t0);
            int v = cache.offset(layer, 1, t0) + headOffset;
            int last = Math.min(pos, t0 + blockSize - 1);
            for (int t = t0; t <= last; t++, v += kvDim) {
                float a = att[t];
                for (int i = 0; i < headSize; i++) {
                    out[oo + i] += a * block[v + i];
                }
            }
        }
    }

    /**
     * Every head of one sequence at {@code pos}, each exactly as {@link #attentionHead} computes it (query
     * head h reads KV head h / kvMul), into out[0, heads · headSize). The value sums run over all heads at
     * once — out[h · headSize + i] still adds att_h[t] · v_t[i] for t = 0, 1, … in order — as one loop
     * of heads · headSize that the JIT vectorizes, where one head's few dozen floats would not be.
     * {@code att} is scratch of heads × (pos + 1) floats, {@code weights} of heads · headSize.
     */
    public static void attention(
            float[] q,
            KvCache cache,
            int layer,
            int heads,
            int kvMul,
            int pos,
            float[][] att,
            float[] weights,
            float[] out) {
        KvLayout layout = cache.layout();
        int headSize = layout.headDim();
        int kvDim = layout.kvDim();
        if (kvMul != 1) {
            for (int h = 0; h < heads; h++) {
                attentionHead(q, h * headSize, cache, layer, h / kvMul, pos, att[h], out, h * headSize);
            }
            return;
        }
        for (int h = 0; h < heads; h++) {
            scores(q, h * headSize, cache, layer, h * headSize, pos, att[h], 0);
            softmax(att[h], 0, pos + 1);
        }
        java.util.Arrays.fill(out, 0, kvDim, 0.0f);
        int blockSize = layout.blockSize();
        for (int t0 = 0; t0 <= pos; t0 += blockSize) {
            float[] block = cache.blockFor(t0);
            int v = cache.offset(layer, 1, t0);
            int last = Math.min(pos, t0 + blockSize - 1);
            for (int t = t0; t <= last; t++, v += kvDim) {
                for (int h = 0; h < heads; h++) {
                    java.util.Arrays.fill(weights, h * headSize, (h + 1) * headSize, att[h][t]);
                }
                for (int i = 0; i < kvDim; i++) {
                    out[i] += weights[i] * block[v + i];
                }
            }
        }
    }

    /** att[ao + t] = q·k_t / sqrt(headSize) for t = 0..pos, k_t the cached key at {@code headOffset}. */
    private static void scores(
            float[] q, int qo, KvCache cache, int layer, int headOffset, int pos, float[] att, int ao) {
        KvLayout layout = cache.layout();
        int headSize = layout.headDim();
        int kvDim = layout.kvDim();
        int blockSize = layout.blockSize();
        float scale = sqrtf(headSize);
        // walk block by block: one block lookup per blockSize positions, rows kvDim apart inside it
        for (int t0 = 0; t0 <= pos; t0 += blockSize) {
            float[] block = cache.blockFor(t0);
            int k = cache.offset(layer, 0, t0) + headOffset;
            int last = Math.min(pos, t0 + blockSize - 1);
            int t = t0;
            for (; t + 8 <= last + 1; t += 8, k += 8 * kvDim) {
                // eight positions at once: independent sums (enough to hide the add latency), each in i order
                float s0 = 0.0f;
                float s1 = 0.0f;
                float s2 = 0.0f;
                float s3 = 0.0f;
                float s4 = 0.0f;
                float s5 = 0.0f;
                float s6 = 0.0f;
                float s7 = 0.0f;
                for (int i = 0; i < headSize; i++) {
                    float qi = q[qo + i];
                    int ki = k + i;
                    s0 += qi * block[ki];
                    s1 += qi * block[ki + kvDim];
                    s2 += qi * block[ki + 2 * kvDim];
                    s3 += qi * block[ki + 3 * kvDim];
                    s4 += qi * block[ki + 4 * kvDim];
                    s5 += qi * block[ki + 5 * kvDim];
                    s6 += qi * block[ki + 6 * kvDim];
                    s7 += qi * block[ki + 7 * kvDim];
                }
                att[ao + t] = s0 / scale;
                att[ao + t + 1] = s1 / scale;
                att[ao + t + 2] = s2 / scale;
                att[ao + t + 3] = s3 / scale;
                att[ao + t + 4] = s4 / scale;
                att[ao + t + 5] = s5 / scale;
                att[ao + t + 6] = s6 / scale;
                att[ao + t + 7] = s7 / scale;
            }
            for (; t <= last; t++, k += kvDim) {
                float score = 0.0f;
                for (int i = 0; i < headSize; i++) {
                    score += q[qo + i] * block[k + i];
                }
                att[ao + t] = score / scale;
            }
        }
    }

    /** C's expf: e^x rounded to float; StrictMath's value (see {@link StrictExp}) so every JVM agrees. */
    public static float expf(float x) {
        return (float) StrictExp.exp(x);
    }

    /** C's sqrtf: the double square root rounded to float is the correctly rounded float root. */
    public static float sqrtf(float x) {
        return (float) Math.sqrt(x);
    }
}
