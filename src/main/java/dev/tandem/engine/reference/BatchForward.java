package dev.tandem.engine.reference;

import static dev.tandem.engine.reference.TransformerMath.attention;
import static dev.tandem.engine.reference.TransformerMath.rmsnorm;
import static dev.tandem.engine.reference.TransformerMath.rope;
import static dev.tandem.engine.reference.TransformerMath.ropeAngles;
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
    private final PackedWeights w;
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
    private final float[][] att;
    private final float[] attWeights;

    BatchForward(PackedWeights weights, ParallelMatmul mm, int batch) {
        ModelConfig c = weights.config;
        this.w = weights;
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
        att = new float[heads][c.seqLen()];
        attWeights = new float[dim];
    }

    /**
     * Runs every layer for the entries and stores their K/V. The caches must already have capacity for
     * the positions; their lengths are left to the caller. {@code cancelled} (nullable) is checked
     * before each layer.
     */
    void layers(KvCache[] caches, int[] positions, int[] tokens, BooleanSupplier cancelled) {
        int half = headSize / 2;
        for (int b = 0; b < batch; b++) {
            System.arraycopy(w.tokenEmbedding, tokens[b] * dim, x[b], 0, dim);
            ropeAngles(positions[b], headSize, cos, sin, b * half); // same for every layer: compute once
        }
        for (int l = 0; l < w.config.layers(); l++) {
            if (cancelled != null && cancelled.getAsBoolean()) {
                throw new CancellationException("forward pass cancelled");
            }
            for (int b = 0; b < batch; b++) {
                rmsnorm(xb[b], 0, x[b], 0, w.rmsAtt[l], 0, dim);
            }
            mm.matmulBlocks(qkv, xb, w.wqkv[l], dim, dim + 2 * kvDim, batch);
            for (int b = 0; b < batch; b++) {
                rope(qkv[b], 0, dim, headSize, cos, sin, b * half);
                rope(qkv[b], dim, kvDim, headSize, cos, sin, b * half);
                KvCache cache = caches[b];
                float[] block = cache.blockFor(positions[b]);
                System.arraycopy(qkv[b], dim, block, cache.offset(l, 0, positions[b]), kvDim);
                System.arraycopy(qkv[b], dim + kvDim, block, cache.offset(l, 1, positions[b]), kvDim);
            }
            int layer = l;
            // Sequences attend independently: split over the threads, each with its own score buffer.
            mm.forRanges(batch, (b0, b1) -> {
                float[][] scores = b0 == 0 ? att : new float[heads][att[0].length];
                float[] weights = b0 == 0 ? attWeights : new float[dim];
                for (int b = b0; b < b1; b++) {
                    attention(qkv[b], caches[b], layer, heads, kvMul, positions[b], scores, weights, xb[b]);
                }
            });
            mm.matmulBlocks(xb2, xb, w.wo[l], dim, dim, batch);
            for (int b = 0; b < batch; b++) {
                addInPlace(x[b], xb2[b], dim);
                rmsnorm(xb[b], 0, x[b], 0, w.rmsFfn[l], 0, dim);
            }
            mm.matmulBlocks(hb, xb, w.w13[l], dim, 2 * hidden, batch);
            for (int b = 0; b < batch; b++) {
                float[] h = hb[b];
                for (int i = 0; i < hidden; i++) {
                    h[i] = silu(h[i]) * h[hidden + i]; // swiglu: silu(w1·x) · w3·x
                }
            }
            mm.matmulBlocks(xb, hb, w.w2[l], hidden, dim, batch);
            for (int b = 0; b < batch; b++) {
                addInPlace(x[b], xb[b], dim);
            }
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
    static float[][] logits(PackedWeights w, ParallelMatmul mm, float[][] states) {
        int n = states.length;
        int dim = w.config.dim();
        float[][] normed = new float[n][dim];
        for (int i = 0; i < n; i++) {
            rmsnorm(normed[i], 0, states[i], 0, w.rmsFinal, 0, dim);
        }
        float[][] out = new float[n][w.config.vocabSize()];
        mm.matmulBlocks(out, normed, w.classifier, dim, w.config.vocabSize(), n);
        return out;
    }

    private static void addInPlace(float[] acc, float[] delta, int size) {
        for (int i = 0; i < size; i++) {
            acc[i] += delta[i];
        }
    }
}
