package dev.tandem.engine.reference;

/**
 * Whose float arithmetic the forward pass reproduces outside the matrix products (the matrices bring
 * their own). Both compute the same model; they differ in rounding, and a prefill worker and a decode
 * worker must agree to the bit, so a model always runs with one of them.
 */
public enum Numerics {
    /**
     * llama2.c's run.c: float sums in index order, attention scores divided by √headSize, K and V kept
     * as float32. Checkpoints in llama2.c's format run this way, bit-identical to run.c.
     */
    RUN_C,
    /**
     * llama.cpp's CPU backend (ggml) with its default f16 KV cache: RMS sums in double, K and V rounded
     * to f16 as they are stored, the query rounded to f16 for the scores (scaled by a multiplication
     * with 1/√headSize) and the attention weights rounded to f16 before they weigh V, as ggml's
     * products with an f16 cache do. GGUF models run this way, to give llama.cpp's tokens.
     */
    GGML
}
