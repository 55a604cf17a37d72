package dev.tandem.engine.reference;

import static dev.tandem.engine.reference.TransformerMath.expf;
import static dev.tandem.engine.reference.TransformerMath.sqrtf;

import dev.tandem.engine.HalfFloats;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;

/**
 * The operations {@link Numerics#GGML} does differently from run.c: ggml's RMS norm (sum of squares in
 * double) and attention over an f16 KV cache (query and attention weights rounded to f16, as ggml's
 * f16 matrix products round their float operand).
 */
final class GgmlMath {
    private GgmlMath() {}

    /** out[o + j] = (x[xo + j] · 1/sqrtf(Σ x² / size + eps)) · weight[j], the sum in double. */
    static void rmsnorm(float[] out, int o, float[] x, int xo, float[] weight, int size, float eps) {
        double sum = 0.0;
        for (int j = 0; j < size; j++) {
            sum += (double) (x[xo + j] * x[xo + j]);
        }
        float mean = (float) (sum / size);
        float scale = 1.0f / sqrtf(mean + eps);
        for (int j = 0; j < size; j++) {
            out[o + j] = (x[xo + j] * scale) * weight[j];
        }
    }

    /** A float as the nearest f16 would give it back. */
    static float toF16(float v) {
        return HalfFloats.half(HalfFloats.toHalf(v));
    }

    /**
     * Every head of one sequence at {@code pos} into out[0, heads · headSize): scores of the f16-rounded
     * query against the cached keys, times 1/√headSize, softmax (sum in double), weights rounded to f16,
     * then the weighted sum of the cached values. {@code att} is scratch of pos + 1 floats per head,
     * {@code q16} of headSize floats.
     */
    static void attention(
            float[] q,
            KvCache cache,
            int layer,
            int heads,
            int kvMul,
            int pos,
            float[][] att,
            float[] q16,
            float[] out) {
        KvLayout layout = cache.layout();
        int headSize = layout.headDim();
        int kvDim = layout.kvDim();
        int blockSize = layout.blockSize();
        float scale = 1.0f / sqrtf(headSize);
        for (int h = 0; h < heads; h++) {
            for (int i = 0; i < headSize; i++) {
                q16[i] = toF16(q[h * headSize + i]);
            }
            int headOffset = (h / kvMul) * headSize;
            float[] a = att[h];
            for (int t0 = 0; t0 <= pos; t0 += blockSize) {
                float[] block = cache.blockFor(t0);
                int k = cache.offset(layer, 0, t0) + headOffset;
                int last = Math.min(pos, t0 + blockSize - 1);
                for (int t = t0; t <= last; t++, k += kvDim) {
                    float s = 0.0f;
                    for (int i = 0; i < headSize; i++) {
                        s += q16[i] * block[k + i];
                    }
                    a[t] = s * scale;
                }
            }
            softmaxToF16(a, pos + 1);
            int oo = h * headSize;
            java.util.Arrays.fill(out, oo, oo + headSize, 0.0f);
            for (int t0 = 0; t0 <= pos; t0 += blockSize) {
                float[] block = cache.blockFor(t0);
                int v = cache.offset(layer, 1, t0) + headOffset;
                int last = Math.min(pos, t0 + blockSize - 1);
                for (int t = t0; t <= last; t++, v += kvDim) {
                    float w = a[t];
                    for (int i = 0; i < headSize; i++) {
                        out[oo + i] += w * block[v + i];
                    }
                }
            }
        }
    }

    private static void softmaxToF16(float[] a, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int t = 0; t < n; t++) {
            max = Math.max(max, a[t]);
        }
        double sum = 0.0;
        for (int t = 0; t < n; t++) {
            a[t] = expf(a[t] - max);
            sum += a[t];
        }
        float inv = (float) (1.0 / sum);
        for (int t = 0; t < n; t++) {
            a[t] = toF16(a[t] * inv);
        }
    }
}
