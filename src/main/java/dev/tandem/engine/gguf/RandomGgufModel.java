package dev.tandem.engine.gguf;

import java.io.IOException;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * Writes a random model of a published shape as a GGUF file, with a real tokenizer in it, so tests and
 * benchmarks run real widths and quantization offline. Matrices are uniform with unit output variance;
 * the embedding is scaled so the (tied) logits spread by a few units, giving greedy choices margins.
 * {@code q4_k} mixes types as a Q4_K_M file does (Q6_K for every other layer's attn_v and ffn_down, and
 * the embedding), and rows that do not fill K-quant blocks fall back as llama.cpp's quantizer does
 * (Q4_K to Q5_0, Q6_K to Q8_0).
 */
public final class RandomGgufModel {
    private final ModelShape shape;
    private final GgmlType type;
    private final GgufVocabularySpec vocabulary;
    private final long seed;

    public RandomGgufModel(ModelShape shape, GgmlType type, GgufVocabularySpec vocabulary, long seed) {
        if (vocabulary.size() > shape.vocabSize()) {
            throw new IllegalArgumentException(
                    "a vocabulary of " + vocabulary.size() + " does not fit the shape's " + shape.vocabSize());
        }
        this.shape = shape;
        this.type = type;
        this.vocabulary = vocabulary.paddedTo(shape.vocabSize());
        this.seed = seed;
    }

    /** The type names {@code --type} takes. */
    public static GgmlType parseType(String name) {
        return switch (name.toLowerCase(java.util.Locale.ROOT)) {
            case "f32" -> GgmlType.F32;
            case "f16" -> GgmlType.F16;
            case "bf16" -> GgmlType.BF16;
            case "q8_0" -> GgmlType.Q8_0;
            case "q4_0" -> GgmlType.Q4_0;
            case "q4_k" -> GgmlType.Q4_K;
            case "q6_k" -> GgmlType.Q6_K;
            default ->
                throw new IllegalArgumentException(
                        "unknown type '" + name + "': f32, f16, bf16, q8_0, q4_0, q4_k or q6_k");
        };
    }

    public void write(Path file) throws IOException {
        ModelShape s = shape;
        String a = s.architecture();
        GgufWriter w = new GgufWriter();
        w.put("general.architecture", GgufValue.string(a));
        w.put(
                "general.name",
                GgufValue.string("random " + s.name() + " " + type.name().toLowerCase(java.util.Locale.ROOT)));
        w.put(a + ".context_length", GgufValue.uint32(s.contextLength()));
        w.put(a + ".embedding_length", GgufValue.uint32(s.dim()));
        w.put(a + ".block_count", GgufValue.uint32(s.layers()));
        w.put(a + ".feed_forward_length", GgufValue.uint32(s.hiddenDim()));
        w.put(a + ".attention.head_count", GgufValue.uint32(s.heads()));
        w.put(a + ".attention.head_count_kv", GgufValue.uint32(s.kvHeads()));
        w.put(a + ".rope.freq_base", GgufValue.float32(s.ropeBase()));
        w.put(a + ".rope.dimension_count", GgufValue.uint32(s.headSize()));
        w.put(a + ".attention.layer_norm_rms_epsilon", GgufValue.float32(s.rmsEpsilon()));
        vocabulary.writeTo(w);
        int dim = s.dim();
        int kv = s.kvHeads() * s.headSize();
        float logitSpread = 4.0f;
        GgmlType embd = type == GgmlType.Q4_K ? GgmlType.Q6_K : type;
        w.tensor(
                "token_embd.weight",
                dims(dim, s.vocabSize()),
                fit(embd, dim),
                () -> matrix(fit(embd, dim), s.vocabSize(), dim, logitSpread / (float) Math.sqrt(dim), "token_embd"));
        if (s.llama3Rope()) {
            w.tensor(
                    "rope_freqs.weight",
                    new long[] {s.headSize() / 2},
                    GgmlType.F32,
                    () -> GgmlQuantize.quantize(GgmlType.F32, s.ropeFreqFactors()));
        }
        // GPT-2's scaled initialisation of the projections into the residual stream: deep random stacks
        // stay close to linear, so float rounding differences are not amplified layer after layer.
        float residualGain = (float) (1 / Math.sqrt(2.0 * s.layers()));
        for (int l = 0; l < s.layers(); l++) {
            String p = "blk." + l + ".";
            boolean high = type == GgmlType.Q4_K && l % 2 == 0;
            vector(w, p + "attn_norm.weight", dim, 1, 0.1f);
            matrix(w, p + "attn_q.weight", dim, dim, type);
            matrix(w, p + "attn_k.weight", kv, dim, type);
            matrix(w, p + "attn_v.weight", kv, dim, high ? GgmlType.Q6_K : type);
            if (a.equals("qwen2")) {
                vector(w, p + "attn_q.bias", dim, 0, 0.2f);
                vector(w, p + "attn_k.bias", kv, 0, 0.2f);
                vector(w, p + "attn_v.bias", kv, 0, 0.2f);
            }
            matrix(w, p + "attn_output.weight", dim, dim, type, residualGain);
            vector(w, p + "ffn_norm.weight", dim, 1, 0.1f);
            matrix(w, p + "ffn_gate.weight", s.hiddenDim(), dim, type);
            matrix(w, p + "ffn_up.weight", s.hiddenDim(), dim, type);
            matrix(w, p + "ffn_down.weight", dim, s.hiddenDim(), high ? GgmlType.Q6_K : type, residualGain);
        }
        vector(w, "output_norm.weight", dim, 1, 0.1f);
        if (!s.tiedOutput()) {
            matrix(w, "output.weight", s.vocabSize(), dim, type);
        }
        w.write(file);
    }

    private static long[] dims(int cols, int rows) {
        return new long[] {cols, rows};
    }

    /** llama.cpp's fallback for rows that do not fill the type's blocks. */
    static GgmlType fit(GgmlType t, int cols) {
        if (cols % t.blockElements() == 0) {
            return t;
        }
        return switch (t) {
            case Q4_K -> GgmlType.Q5_0;
            case Q6_K -> GgmlType.Q8_0;
            default -> throw new IllegalArgumentException(t + " cannot hold rows of " + cols);
        };
    }

    private void matrix(GgufWriter w, String name, int rows, int cols, GgmlType t) {
        matrix(w, name, rows, cols, t, 1);
    }

    private void matrix(GgufWriter w, String name, int rows, int cols, GgmlType t, float gain) {
        GgmlType actual = fit(t, cols);
        float bound = gain * (float) Math.sqrt(3.0 / cols);
        w.tensor(name, dims(cols, rows), actual, () -> matrix(actual, rows, cols, bound, name));
    }

    /** A {@code rows} × {@code cols} matrix uniform in ±bound, quantized a few rows at a time. */
    private byte[] matrix(GgmlType t, int rows, int cols, float bound, String name) {
        SplittableRandom random = new SplittableRandom(seed ^ name.hashCode());
        byte[] out = new byte[Math.toIntExact(t.bytes((long) rows * cols))];
        int rowBytes = Math.toIntExact(t.bytes(cols));
        int chunk = Math.max(1, (1 << 20) / cols);
        float[] values = new float[chunk * cols];
        for (int r = 0; r < rows; r += chunk) {
            int n = Math.min(chunk, rows - r);
            float[] part = n == chunk ? values : new float[n * cols];
            for (int i = 0; i < part.length; i++) {
                part[i] = (float) ((random.nextDouble() * 2 - 1) * bound);
            }
            byte[] q = GgmlQuantize.quantize(t, part);
            System.arraycopy(q, 0, out, r * rowBytes, q.length);
        }
        return out;
    }

    private void vector(GgufWriter w, String name, int size, float center, float spread) {
        SplittableRandom random = new SplittableRandom(seed ^ name.hashCode());
        float[] v = new float[size];
        for (int i = 0; i < size; i++) {
            v[i] = center + (float) ((random.nextDouble() * 2 - 1) * spread);
        }
        w.tensor(name, new long[] {size}, GgmlType.F32, GgmlQuantize.quantize(GgmlType.F32, v));
    }
}
