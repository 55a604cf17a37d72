package dev.tandem.engine.reference;

import dev.tandem.engine.ModelConfig;

/**
 * A llama-family transformer's weights as {@link BatchForward} reads them, whatever their source: a
 * llama2.c checkpoint's floats ({@link PackedWeights}) or a GGUF file's tensors, mapped and multiplied
 * in their own types. Read-only: one instance serves every thread.
 */
public interface TransformerWeights {
    ModelConfig config();

    /** Whose arithmetic the non-matrix operations follow. */
    Numerics numerics();

    Rope rope();

    /** The epsilon under the RMS norms' square root. */
    float rmsEpsilon();

    /** The token's row of the embedding, as floats, into {@code out[0, dim)}. */
    void embed(int token, float[] out);

    float[] attentionNorm(int layer);

    /** Q, K and V's matrices stacked: one product gives a token's q, k and v one after the other. */
    WeightMatrix qkv(int layer);

    /** The biases added to q, k and v (Qwen2), stacked like {@link #qkv}; null when the model has none. */
    float[] qkvBias(int layer);

    WeightMatrix attentionOutput(int layer);

    float[] ffnNorm(int layer);

    /** The gate and up projections stacked: the SwiGLU's two inputs one after the other. */
    WeightMatrix gateUp(int layer);

    WeightMatrix down(int layer);

    float[] outputNorm();

    /** The classifier: the output matrix, or the token embedding when the model ties them. */
    WeightMatrix output();

    /** Heap (or mapped memory) the weights take. */
    long bytes();
}
