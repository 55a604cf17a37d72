package dev.tandem.engine.reference;

import static dev.tandem.engine.reference.TransformerMath.rowBlocks;

import dev.tandem.engine.ModelConfig;

/**
 * The weights laid out for compute: every matrix in blocks of rows, each block by column (see
 * {@link TransformerMath#rowBlocks}), the embedding kept row-major for lookups. Immutable.
 */
final class PackedWeights {
    final ModelConfig config;
    final float[] tokenEmbedding;
    final float[][] rmsAtt;
    final float[][][][] wq;
    final float[][][][] wk;
    final float[][][][] wv;
    final float[][][][] wo;
    final float[][] rmsFfn;
    final float[][][][] w1;
    final float[][][][] w2;
    final float[][][][] w3;
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
        wq = new float[layers][][][];
        wk = new float[layers][][][];
        wv = new float[layers][][][];
        wo = new float[layers][][][];
        w1 = new float[layers][][][];
        w2 = new float[layers][][][];
        w3 = new float[layers][][][];
        for (int l = 0; l < layers; l++) {
            wq[l] = rowBlocks(w.wq[l], dim, dim);
            wk[l] = rowBlocks(w.wk[l], kvDim, dim);
            wv[l] = rowBlocks(w.wv[l], kvDim, dim);
            wo[l] = rowBlocks(w.wo[l], dim, dim);
            w1[l] = rowBlocks(w.w1[l], hidden, dim);
            w2[l] = rowBlocks(w.w2[l], dim, hidden);
            w3[l] = rowBlocks(w.w3[l], hidden, dim);
        }
        classifier = rowBlocks(w.classifier, c.vocabSize(), dim);
    }

    private static float[][] copy(float[][] perLayer) {
        float[][] out = new float[perLayer.length][];
        for (int l = 0; l < perLayer.length; l++) {
            out[l] = perLayer[l].clone();
        }
        return out;
    }
}
