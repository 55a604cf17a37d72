package dev.tandem.engine.reference;

import static dev.tandem.engine.reference.TransformerMath.attention;
import static dev.tandem.engine.reference.TransformerMath.silu;

import dev.tandem.engine.KvCache;
import dev.tandem.engine.ModelConfig;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;

/**
 * The forward pass for a batch of entries, each one token at one position of one cache. Entries may
 * be different sequences (decode) or consecutive positions of the same sequence (prefill chunk): all
 * K/V of a layer are stored before that layer's attention runs, so an entry sees the entries before
 * it. Every entry goes through exactly the same float operations as it would alone, so its results
 * are bit-identical whatever the batch.
 *
 * <p>One instance per call (it owns the scratch activations); the weights are only read.
 */
final class BatchForward {
    private final TransformerWeights w;
    private final boolean ggml;
    private final Rope rope;
    private final ParallelMatmul mm;
    private final int batch;
    private final int dim;
    private final int kvDim;
    private final int hidden;
    private final int headSize;
    private final int heads;
    private final int kvMul;
    // activations, one array per entry
    private final float[][] x;
    private final float[][] xb;
    private final float[][] xb2;
    private final float[][] qkv; // q, k and v of an entry, one after the other
    private final float[][] hb; // w1's and w3's outputs, one after the other
    private final float[] cos;
    private final float[] sin;
    private float[][] att;
    private final float[] attWeights;

    BatchForward(TransformerWeights weights, ParallelMatmul mm, int batch) {
        ModelConfig c = weights.config();
        this.w = weights;
        this.ggml = weights.numerics() == Numerics.GGML;
        this.rope = weights.rope();
        this.mm = mm;
        this.batch = batch;
        this.dim = c.dim();
        this.kvDim = c.kvDim();
        this.hidden = c.hiddenDim();
        this.headSize = c.headSize();
        this.heads = c.heads();
        this.kvMul = c.heads() / c.kvHeads();
        x = new float[batch][dim];
        xb = new float[batch][dim];
        xb2 = new float[batch][dim];
        qkv = new float[batch][dim + 2 * kvDim];
        hb = new float[batch][2 * hidden];
        cos = new float[batch * headSize / 2];
        sin = new float[batch * headSize / 2];
        att = new float[heads][0];
        attWeights = new float[dim];
    }

    /**
     * Runs every layer for the entries and stores their K/V. The caches must already have capacity for
     * the positions; their lengths are left to the caller. {@code cancelled} (nullable) is checked
     * before each layer.
     */
    void layers(KvCache[] caches, int[] positions, int[] tokens, BooleanSupplier cancelled) {
        int half = headSize / 2;
        int maxPos = 0;
        for (int b = 0; b < batch; b++) {
            w.embed(tokens[b], x[b]);
            rope.angles(positions[b], cos, sin, b * half); // same for every layer: compute once
            maxPos = Math.max(maxPos, positions[b]);
        }
        if (att[0].length <= maxPos) {
            att = new float[heads][maxPos + 1];
        }
        for (int l = 0; l < w.config().layers(); l++) {
            if (cancelled != null && cancelled.getAsBoolean()) {
                throw new CancellationException("forward pass cancelled");
            }
            for (int b = 0; b < batch; b++) {
                norm(xb[b], x[b], w.attentionNorm(l));
            }
            mm.matmul(qkv, xb, w.qkv(l), batch);
            float[] bias = w.qkvBias(l);
            for (int b = 0; b < batch; b++) {
                if (bias != null) {
                    addInPlace(qkv[b], bias, dim + 2 * kvDim);
                }
                rope.rotate(qkv[b], 0, dim, cos, sin, b * half);
                rope.rotate(qkv[b], dim, kvDim, cos, sin, b * half);
                store(caches[b], l, positions[b], qkv[b]);
            }
            int layer = l;
            // Sequences attend independently: split over the threads, each with its own score buffer.
            mm.forRanges(batch, (b0, b1) -> {
                float[][] scores = b0 == 0 ? att : new float[heads][att[0].length];
                float[] weights = b0 == 0 ? attWeights : new float[dim];
                for (int b = b0; b < b1; b++) {
                    if (ggml) {
                        GgmlMath.attention(
                                qkv[b], caches[b], layer, heads, kvMul, positions[b], scores, weights, xb[b]);
                    } else {
                        attention(qkv[b], caches[b], layer, heads, kvMul, positions[b], scores, weights, xb[b]);
                    }
                }
            });
            mm.matmul(xb2, xb, w.attentionOutput(l), batch);
            for (int b = 0; b < batch; b++) {
                addInPlace(x[b], xb2[b], dim);
                norm(xb[b], x[b], w.ffnNorm(l));
            }
            mm.matmul(hb, xb, w.gateUp(l), batch);
            for (int b = 0; b < batch; b++) {
                float[] h = hb[b];
                for (int i = 0; i < hidden; i++) {
                    h[i] = silu(h[i]) * h[hidden + i]; // swiglu: silu(w1·x) · w3·x
                }
            }
            mm.matmul(xb, hb, w.down(l), batch);
            for (int b = 0; b < batch; b++) {
                addInPlace(x[b], xb[b], dim);
            }
        }
    }

    /** The entry's K and V at {@code pos} into its cache: as computed, or rounded to f16 as ggml's cache holds them. */
    private void store(KvCache cache, int layer, int pos, float[] entry) {
        float[] block = cache.blockFor(pos);
        int k = cache.offset(layer, 0, pos);
        int v = cache.offset(layer, 1, pos);
        System.arraycopy(entry, dim, block, k, kvDim);
        System.arraycopy(entry, dim + kvDim, block, v, kvDim);
        if (ggml) {
            for (int i = 0; i < kvDim; i++) {
                block[k + i] = GgmlMath.toF16(block[k + i]);
                block[v + i] = GgmlMath.toF16(block[v + i]);
            }
        }
    }

    private void norm(float[] out, float[] in, float[] weight) {
        norm(w, out, in, weight);
    }

    private static void norm(TransformerWeights w, float[] out, float[] in, float[] weight) {
        int size = w.config().dim();
        if (w.numerics() == Numerics.GGML) {
            GgmlMath.rmsnorm(out, 0, in, 0, weight, size, w.rmsEpsilon());
        } else {
            TransformerMath.rmsnorm(out, 0, in, 0, weight, 0, size);
        }
    }

    /** Final norm and classifier for the chosen entries (after {@link #layers}); one array per entry. */
    float[][] logits(int[] entries) {
        float[][] states = new float[entries.length][];
        for (int i = 0; i < entries.length; i++) {
            states[i] = x[entries[i]];
        }
        return logits(w, mm, states);
    }

    /** The residual stream of an entry after {@link #layers}: what {@link #logits} reads. */
    float[] state(int entry) {
        return x[entry];
    }

    /** Final norm and classifier of residual streams, one logits array per stream. */
    static float[][] logits(TransformerWeights w, ParallelMatmul mm, float[][] states) {
        int n = states.length;
        int dim = w.config().dim();
        float[][] normed = new float[n][dim];
        for (int i = 0; i < n; i++) {
            norm(w, normed[i], states[i], w.outputNorm());
        }
        float[][] out = new float[n][w.config().vocabSize()];
        mm.matmul(out, normed, w.output(), n);
        return out;
    }

    private static void addInPlace(float[] acc, float[] delta, int size) {
        for (int i = 0; i < size; i++) {
            acc[i] += delta[i];
        }
    }
}
