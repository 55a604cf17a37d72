package dev.tandem.engine.gguf;

import dev.tandem.engine.ModelConfig;

/**
 * A GGUF model's architecture as its metadata states it ({@code general.architecture} and the
 * {@code <arch>.*} keys): the shape, the norm's epsilon, the RoPE base and ordering. {@code llama}
 * (Llama 2 and 3.x, TinyLlama, SmolLM2, Mistral) rotates adjacent pairs, its converters having permuted
 * Q and K to match; {@code qwen2} rotates NEOX-style and adds biases to q, k and v.
 *
 * @param contextLength the context the model was trained for (the metadata's)
 * @param config the shape the engine runs, its sequence length capped at {@code maxContext}
 */
public record GgufArchitecture(
        String name,
        ModelConfig config,
        int contextLength,
        float rmsEpsilon,
        float ropeBase,
        boolean neox,
        boolean qkvBias) {

    /** The architectures the reference engine runs. */
    public static final java.util.List<String> SUPPORTED = java.util.List.of("llama", "qwen2");

    public static GgufArchitecture of(GgufFile file, int maxContext) {
        GgufMetadata m = file.metadata();
        String arch = m.string("general.architecture");
        if (!SUPPORTED.contains(arch)) {
            throw new GgufFormatException(file.path() + " is a '" + arch + "' model; the reference engine runs "
                    + String.join(" and ", SUPPORTED));
        }
        int dim = dimension(m, arch + ".embedding_length");
        int heads = dimension(m, arch + ".attention.head_count");
        int kvHeads = (int) m.integer(arch + ".attention.head_count_kv", heads);
        int layers = dimension(m, arch + ".block_count");
        int hidden = dimension(m, arch + ".feed_forward_length");
        int context = dimension(m, arch + ".context_length");
        long[] embd = file.tensor("token_embd.weight").dims();
        int vocab = Math.toIntExact(embd[1]);
        if (embd[0] != dim) {
            throw new GgufFormatException(
                    "token_embd.weight rows are " + embd[0] + " long, the model's width is " + dim);
        }
        if (m.has("tokenizer.ggml.tokens") && m.strings("tokenizer.ggml.tokens").length != vocab) {
            throw new GgufFormatException("the vocabulary has " + m.strings("tokenizer.ggml.tokens").length
                    + " tokens, token_embd.weight " + vocab + " rows");
        }
        long ropeDims = m.integer(arch + ".rope.dimension_count", dim / heads);
        if (ropeDims != dim / heads) {
            throw new GgufFormatException(arch + ".rope.dimension_count " + ropeDims + " is not the head size "
                    + dim / heads + " (partial rotary embeddings are not supported)");
        }
        boolean tied = !file.hasTensor("output.weight");
        ModelConfig config =
                new ModelConfig(dim, hidden, layers, heads, kvHeads, vocab, Math.min(context, maxContext), tied);
        float eps = (float) m.number(arch + ".attention.layer_norm_rms_epsilon", 1e-5);
        float base = (float) m.number(arch + ".rope.freq_base", 10000.0);
        boolean qwen2 = arch.equals("qwen2");
        return new GgufArchitecture(arch, config, context, eps, base, qwen2, qwen2);
    }

    private static int dimension(GgufMetadata m, String key) {
        long v = m.integer(key);
        if (v <= 0 || v > Integer.MAX_VALUE) {
            throw new GgufFormatException("the GGUF metadata's '" + key + "' is " + v);
        }
        return (int) v;
    }
}
