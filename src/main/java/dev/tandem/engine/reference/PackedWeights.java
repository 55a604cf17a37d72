package dev.tandem.engine.reference;

import dev.tandem.engine.ModelConfig;

/**
 * The weights laid out for compute: every matrix in blocks of rows as {@link MatmulKernel#ACTIVE} reads
 * them (by column, see {@link TransformerMath#rowBlocks}, or by strips of rows for the vector kernel),
 * the embedding kept row-major for lookups. Immutable.
 */
final class PackedWeights {
    final ModelConfig config;
    final float[] tokenEmbedding;
    final float[][] rmsAtt;
    /** wq, wk and wv stacked: q, k and v are one product of rows dim + 2·kvDim (one hand-off, longer rows). */
    final float[][][][] wqkv;

    final float[][][][] wo;
    final float[][] rmsFfn;
    /** w1 and w3 stacked, for the same reason. */
    final float[][][][] w13;

    final float[][][][] w2;
    final float[] rmsFinal;
    final float[][][] classifier;

    PackedWeights(ModelWeights w) {
        ModelConfig c = w.config();
        int dim = c.dim();
        int kvDim = c.kvDim();
        int hidden = c.hiddenDim();
        int layers = c.layers();
        config = c;
        tokenEmbedding = w.tokenEmbedding.clone();
        rmsAtt = copy(w.rmsAtt);
        rmsFfn = copy(w.rmsFfn);
        rmsFinal = w.rmsFinal.clone();
        wqkv = new float[layers][][][];
        wo = new float[layers][][][];
        w13 = new float[layers][][][];
        w2 = new float[layers][][][];
        for (int l = 0; l < layers; l++) {
            wqkv[l] = pack(stack(w.wq[l], w.wk[l], w.wv[l]), dim + 2 * kvDim, dim);
            wo[l] = pack(w.wo[l], dim, dim);
            w13[l] = pack(stack(w.w1[l], w.w3[l]), 2 * hidden, dim);
            w2[l] = pack(w.w2[l], dim, hidden);
        }
        classifier = pack(w.classifier, c.vocabSize(), dim);
    }

    /** Heap the weights take: every matrix and vector once (the packed layout pads nothing worth counting). */
    long bytes() {
        long dim = config.dim();
        long kvDim = config.kvDim();
        long hidden = config.hiddenDim();
        long perLayer = 2 * dim + (dim + 2 * kvDim) * dim + dim * dim + 2 * hidden * dim + dim * hidden;
        return Float.BYTES * (2 * config.vocabSize() * dim + config.layers() * perLayer + dim);
    }

    private static float[][][] pack(float[] w, int d, int n) {
        return MatmulKernel.ACTIVE.pack(w, d, n);
    }

    /** Row-major matrices of the same width, one under the other. */
    private static float[] stack(float[]... parts) {
        int size = 0;
        for (float[] p : parts) {
            size += p.length;
        }
        float[] out = new float[size];
        int at = 0;
        for (float[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    private static float[][] copy(float[][] perLayer) {
        float[][] out = new float[perLayer.length][];
        for (int l = 0; l < perLayer.length; l++) {
            out[l] = perLayer[l].clone();
        }
        return out;
    }
}
