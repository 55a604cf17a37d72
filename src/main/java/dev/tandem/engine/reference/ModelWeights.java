package dev.tandem.engine.reference;

import dev.tandem.engine.ModelConfig;
import dev.tandem.engine.SplitMix64;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The weights of a llama-architecture model as flat row-major float arrays, one per matrix and layer.
 * Read-only once built: engines share one instance across threads.
 */
public final class ModelWeights {

    /** One weight array in checkpoint order; a matrix is [rows][cols], a norm weight is 1 × cols. */
    public record Tensor(String name, float[] data, int rows, int cols) {
        public boolean isNorm() {
            return name.startsWith("rms");
        }
    }

    final ModelConfig config;
    final float[] tokenEmbedding;
    final float[][] rmsAtt;
    final float[][] wq;
    final float[][] wk;
    final float[][] wv;
    final float[][] wo;
    final float[][] rmsFfn;
    final float[][] w1;
    final float[][] w2;
    final float[][] w3;
    final float[] rmsFinal;
    final float[] classifier;
    private final List<Tensor> tensors;

    /** Zero weights of the given shape, to be filled through {@link #tensors()}. */
    public ModelWeights(ModelConfig c) {
        int dim = c.dim();
        int kvDim = c.kvDim();
        int hidden = c.hiddenDim();
        int layers = c.layers();
        this.config = c;
        List<Tensor> list = new ArrayList<>();
        tokenEmbedding = add(list, "token_embedding", c.vocabSize(), dim);
        rmsAtt = addLayers(list, "rms_att", layers, 1, dim);
        wq = addLayers(list, "wq", layers, dim, dim);
        wk = addLayers(list, "wk", layers, kvDim, dim);
        wv = addLayers(list, "wv", layers, kvDim, dim);
        wo = addLayers(list, "wo", layers, dim, dim);
        rmsFfn = addLayers(list, "rms_ffn", layers, 1, dim);
        w1 = addLayers(list, "w1", layers, hidden, dim);
        w2 = addLayers(list, "w2", layers, dim, hidden);
        w3 = addLayers(list, "w3", layers, hidden, dim);
        rmsFinal = add(list, "rms_final", 1, dim);
        classifier = c.sharedClassifier() ? tokenEmbedding : add(list, "classifier", c.vocabSize(), dim);
        this.tensors = Collections.unmodifiableList(list);
    }

    /**
     * Deterministic pseudo-random weights: matrices uniform in ±1/sqrt(fan_in) (so activations keep
     * their scale), the token embedding uniform in ±1, norm weights uniform in 1 ± 0.1. Identical in
     * every JVM for the same (config, seed).
     */
    public static ModelWeights random(ModelConfig config, long seed) {
        ModelWeights w = new ModelWeights(config);
        SplitMix64 rng = new SplitMix64(seed);
        for (Tensor t : w.tensors) {
            float center = t.isNorm() ? 1.0f : 0.0f;
            float scale =
                    t.isNorm() ? 0.1f : t.name().equals("token_embedding") ? 1.0f : (float) (1.0 / Math.sqrt(t.cols()));
            float[] data = t.data();
            for (int i = 0; i < data.length; i++) {
                data[i] = center + scale * (2.0f * rng.nextFloat() - 1.0f);
            }
        }
        return w;
    }

    public ModelConfig config() {
        return config;
    }

    /**
     * Every weight array in llama2.c checkpoint order (the RoPE tables excluded; the classifier only
     * when it is not shared with the embedding). Arrays are live: fill them before use, never after.
     */
    public List<Tensor> tensors() {
        return tensors;
    }

    /** Total number of weight floats (the shared classifier counted once). */
    public long parameterCount() {
        long n = 0;
        for (Tensor t : tensors) {
            n += t.data().length;
        }
        return n;
    }

    /**
     * First 8 bytes (big-endian) of SHA-256 over the config as 8 little-endian int32 (dim, hidden,
     * layers, heads, kvHeads, vocab, seqLen, shared ? 1 : 0) followed by every tensor's float bits,
     * little-endian, in {@link #tensors()} order.
     */
    public long fingerprint() {
        MessageDigest sha = sha256();
        ModelConfig c = config;
        ByteBuffer header = ByteBuffer.allocate(8 * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int v : new int[] {
            c.dim(),
            c.hiddenDim(),
            c.layers(),
            c.heads(),
            c.kvHeads(),
            c.vocabSize(),
            c.seqLen(),
            c.sharedClassifier() ? 1 : 0
        }) {
            header.putInt(v);
        }
        sha.update(header.array());
        ByteBuffer bytes = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        FloatBuffer floats = bytes.asFloatBuffer(); // a little-endian view: raw float bits, no copies per float
        for (Tensor t : tensors) {
            float[] data = t.data();
            for (int off = 0; off < data.length; off += floats.capacity()) {
                int len = Math.min(floats.capacity(), data.length - off);
                floats.clear();
                floats.put(data, off, len);
                sha.update(bytes.array(), 0, len * Float.BYTES);
            }
        }
        return ByteBuffer.wrap(sha.digest()).getLong();
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }

    private static float[] add(List<Tensor> list, String name, int rows, int cols) {
        long size = (long) rows * cols;
        if (size > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(name + " has " + size + " floats, more than one Java array holds");
        }
        float[] data = new float[(int) size];
        list.add(new Tensor(name, data, rows, cols));
        return data;
    }

    private static float[][] addLayers(List<Tensor> list, String name, int layers, int rows, int cols) {
        float[][] perLayer = new float[layers][];
        for (int l = 0; l < layers; l++) {
            perLayer[l] = add(list, name + "." + l, rows, cols);
        }
        return perLayer;
    }
}
