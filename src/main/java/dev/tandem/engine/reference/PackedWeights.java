package dev.tandem.engine.reference;

import dev.tandem.engine.ModelConfig;

/**
 * The weights laid out for compute: every matrix in blocks of rows as {@link MatmulKernel#ACTIVE} reads
 * them (by column, see {@link TransformerMath#rowBlocks}, or by strips of rows for the vector kernel),
 * the embedding kept row-major for lookups. Immutable.
 */
final class PackedWeights implements TransformerWeights {
    private final ModelConfig config;
    private final float[] tokenEmbedding;
    private final float[][] rmsAtt;
    /** wq, wk and wv stacked: q, k and v are one product of rows dim + 2·kvDim (one hand-off, longer rows). */
    private final WeightMatrix[] wqkv;

    private final WeightMatrix[] wo;
    private final float[][] rmsFfn;
    /** w1 and w3 stacked, for the same reason. */
    private final WeightMatrix[] w13;

    private final WeightMatrix[] w2;
    private final float[] rmsFinal;
    private final WeightMatrix classifier;
    private final Rope rope;

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
        rope = Rope.runC(c.headSize());
        wqkv = new WeightMatrix[layers];
        wo = new WeightMatrix[layers];
        w13 = new WeightMatrix[layers];
        w2 = new WeightMatrix[layers];
        for (int l = 0; l < layers; l++) {
            wqkv[l] = pack(stack(w.wq[l], w.wk[l], w.wv[l]), dim + 2 * kvDim, dim);
            wo[l] = pack(w.wo[l], dim, dim);
            w13[l] = pack(stack(w.w1[l], w.w3[l]), 2 * hidden, dim);
            w2[l] = pack(w.w2[l], dim, hidden);
        }
        classifier = pack(w.classifier, c.vocabSize(), dim);
    }

    /** Heap the weights take: every matrix and vector once (the packed layout pads nothing worth counting). */
    @Override
    public long bytes() {
        long dim = config.dim();
        long kvDim = config.kvDim();
        long hidden = config.hiddenDim();
        long perLayer = 2 * dim + (dim + 2 * kvDim) * dim + dim * dim + 2 * hidden * dim + dim * hidden;
        return Float.BYTES * (2 * config.vocabSize() * dim + config.layers() * perLayer + dim);
    }

    private static WeightMatrix pack(float[] w, int d, int n) {
        return new FloatBlocksMatrix(w, d, n);
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    @Override
    public Numerics numerics() {
        return Numerics.RUN_C;
    }

    @Override
    public Rope rope() {
        return rope;
    }

    @Override
    public float rmsEpsilon() {
        return 1e-5f;
    }

    @Override
    public void embed(int token, float[] out) {
        System.arraycopy(tokenEmbedding, token * config.dim(), out, 0, config.dim());
    }

    @Override
    public float[] attentionNorm(int layer) {
        return rmsAtt[layer];
    }

    @Override
    public WeightMatrix qkv(int layer) {
        return wqkv[layer];
    }

    @Override
    public float[] qkvBias(int layer) {
        return null;
    }

    @Override
    public WeightMatrix attentionOutput(int layer) {
        return wo[layer];
    }

    @Override
    public float[] ffnNorm(int layer) {
        return rmsFfn[layer];
    }

    @Override
    public WeightMatrix gateUp(int layer) {
        return w13[layer];
    }

    @Override
    public WeightMatrix down(int layer) {
        return w2[layer];
    }

    @Override
    public float[] outputNorm() {
        return rmsFinal;
    }

    @Override
    public WeightMatrix output() {
        return classifier;
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
