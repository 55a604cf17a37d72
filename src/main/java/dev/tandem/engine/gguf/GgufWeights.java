package dev.tandem.engine.gguf;

import dev.tandem.engine.ModelConfig;
import dev.tandem.engine.reference.Numerics;
import dev.tandem.engine.reference.Rope;
import dev.tandem.engine.reference.StackedMatrix;
import dev.tandem.engine.reference.TransformerWeights;
import dev.tandem.engine.reference.WeightMatrix;
import java.io.IOException;
import java.util.List;

/**
 * A GGUF model's tensors as the forward pass reads them: matrices stay in the file's mapping and type
 * ({@link GgmlMatrix}), only the norms' and biases' vectors (a few KB a layer) are read onto the heap.
 * The arithmetic around the products is llama.cpp's ({@link Numerics#GGML}).
 */
public final class GgufWeights implements TransformerWeights {
    private final GgufArchitecture arch;
    private final Rope rope;
    private final GgmlMatrix embedding;
    private final float[][] attentionNorm;
    private final WeightMatrix[] qkv;
    private final float[][] qkvBias;
    private final WeightMatrix[] attentionOutput;
    private final float[][] ffnNorm;
    private final WeightMatrix[] gateUp;
    private final WeightMatrix[] down;
    private final float[] outputNorm;
    private final GgmlMatrix output;
    private final long bytes;

    public GgufWeights(GgufFile file, GgufArchitecture arch) throws IOException {
        this.arch = arch;
        ModelConfig c = arch.config();
        int layers = c.layers();
        float[] freqFactors =
                file.hasTensor("rope_freqs.weight") ? vector(file, "rope_freqs.weight", c.headSize() / 2) : null;
        rope = Rope.ggml(c.headSize(), arch.ropeBase(), arch.neox(), freqFactors);
        embedding = GgmlMatrix.of(file, "token_embd.weight");
        attentionNorm = new float[layers][];
        qkv = new WeightMatrix[layers];
        qkvBias = new float[layers][];
        attentionOutput = new WeightMatrix[layers];
        ffnNorm = new float[layers][];
        gateUp = new WeightMatrix[layers];
        down = new WeightMatrix[layers];
        long mapped = embedding.bytes();
        for (int l = 0; l < layers; l++) {
            String p = "blk." + l + ".";
            attentionNorm[l] = vector(file, p + "attn_norm.weight", c.dim());
            GgmlMatrix q = matrix(file, p + "attn_q.weight", c.dim(), c.dim());
            GgmlMatrix k = matrix(file, p + "attn_k.weight", c.kvDim(), c.dim());
            GgmlMatrix v = matrix(file, p + "attn_v.weight", c.kvDim(), c.dim());
            qkv[l] = new StackedMatrix(List.of(q, k, v));
            if (arch.qkvBias()) {
                qkvBias[l] = concat(
                        vector(file, p + "attn_q.bias", c.dim()),
                        vector(file, p + "attn_k.bias", c.kvDim()),
                        vector(file, p + "attn_v.bias", c.kvDim()));
            }
            GgmlMatrix o = matrix(file, p + "attn_output.weight", c.dim(), c.dim());
            attentionOutput[l] = o;
            ffnNorm[l] = vector(file, p + "ffn_norm.weight", c.dim());
            GgmlMatrix gate = matrix(file, p + "ffn_gate.weight", c.hiddenDim(), c.dim());
            GgmlMatrix up = matrix(file, p + "ffn_up.weight", c.hiddenDim(), c.dim());
            gateUp[l] = new StackedMatrix(List.of(gate, up));
            GgmlMatrix d = matrix(file, p + "ffn_down.weight", c.dim(), c.hiddenDim());
            down[l] = d;
            mapped += q.bytes() + k.bytes() + v.bytes() + o.bytes() + gate.bytes() + up.bytes() + d.bytes();
        }
        outputNorm = vector(file, "output_norm.weight", c.dim());
        output = c.sharedClassifier() ? embedding : matrix(file, "output.weight", c.vocabSize(), c.dim());
        bytes = mapped + (c.sharedClassifier() ? 0 : output.bytes());
    }

    private static GgmlMatrix matrix(GgufFile file, String name, int rows, int cols) throws IOException {
        GgmlMatrix m = GgmlMatrix.of(file, name);
        if (m.rows() != rows || m.cols() != cols) {
            throw new GgufFormatException(
                    name + " is " + m.rows() + " x " + m.cols() + ", the model needs " + rows + " x " + cols);
        }
        return m;
    }

    /** A 1-D tensor (a norm's weights, a bias) as floats, whatever its type. */
    private static float[] vector(GgufFile file, String name, int size) throws IOException {
        GgufTensorInfo t = file.tensor(name);
        if (t.dims().length != 1 || t.elements() != size) {
            throw new GgufFormatException(
                    name + " has shape " + java.util.Arrays.toString(t.dims()) + ", the model needs [" + size + "]");
        }
        float[] out = new float[size];
        GgmlDequant.row(t.type(), file.data(t), 0, size, out, 0);
        return out;
    }

    private static float[] concat(float[]... parts) {
        int n = 0;
        for (float[] p : parts) {
            n += p.length;
        }
        float[] out = new float[n];
        int at = 0;
        for (float[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    public GgufArchitecture architecture() {
        return arch;
    }

    @Override
    public ModelConfig config() {
        return arch.config();
    }

    @Override
    public Numerics numerics() {
        return Numerics.GGML;
    }

    @Override
    public Rope rope() {
        return rope;
    }

    @Override
    public float rmsEpsilon() {
        return arch.rmsEpsilon();
    }

    @Override
    public void embed(int token, float[] out) {
        embedding.row(token, out);
    }

    @Override
    public float[] attentionNorm(int layer) {
        return attentionNorm[layer];
    }

    @Override
    public WeightMatrix qkv(int layer) {
        return qkv[layer];
    }

    @Override
    public float[] qkvBias(int layer) {
        return qkvBias[layer];
    }

    @Override
    public WeightMatrix attentionOutput(int layer) {
        return attentionOutput[layer];
    }

    @Override
    public float[] ffnNorm(int layer) {
        return ffnNorm[layer];
    }

    @Override
    public WeightMatrix gateUp(int layer) {
        return gateUp[layer];
    }

    @Override
    public WeightMatrix down(int layer) {
        return down[layer];
    }

    @Override
    public float[] outputNorm() {
        return outputNorm;
    }

    @Override
    public WeightMatrix output() {
        return output;
    }

    /** The mapped tensors' bytes (page cache, not heap). */
    @Override
    public long bytes() {
        return bytes;
    }
}
