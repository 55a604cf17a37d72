package dev.tandem.engine.gguf;

import java.util.List;

/**
 * The shape of a published model, to write random models of it: the architecture and every dimension
 * as the model's own GGUF states them. {@code llama3Rope} adds Llama 3.1+'s frequency factors
 * ({@code rope_freqs.weight}: factor 32, low 1, high 4, original context 8192).
 */
public record ModelShape(
        String name,
        String architecture,
        int dim,
        int hiddenDim,
        int layers,
        int heads,
        int kvHeads,
        int vocabSize,
        int contextLength,
        float ropeBase,
        float rmsEpsilon,
        boolean tiedOutput,
        boolean llama3Rope) {

    public static final ModelShape SMOLLM2_135M =
            new ModelShape("smollm2-135m", "llama", 576, 1536, 30, 9, 3, 49152, 8192, 100000f, 1e-5f, true, false);
    public static final ModelShape LLAMA_3_2_1B =
            new ModelShape("llama-3.2-1b", "llama", 2048, 8192, 16, 32, 8, 128256, 131072, 500000f, 1e-5f, true, true);
    public static final ModelShape QWEN2_5_0_5B =
            new ModelShape("qwen2.5-0.5b", "qwen2", 896, 4864, 24, 14, 2, 151936, 32768, 1000000f, 1e-6f, true, false);

    public static final List<ModelShape> PUBLISHED = List.of(SMOLLM2_135M, LLAMA_3_2_1B, QWEN2_5_0_5B);

    public static ModelShape named(String name) {
        for (ModelShape s : PUBLISHED) {
            if (s.name.equals(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown shape '" + name + "'; known: "
                + String.join(", ", PUBLISHED.stream().map(ModelShape::name).toList()));
    }

    public int headSize() {
        return dim / heads;
    }

    /** The same shape with fewer layers, a smaller vocabulary or context (tests: a real model's widths, fast). */
    public ModelShape scaled(int layers, int vocabSize, int contextLength) {
        return new ModelShape(
                name,
                architecture,
                dim,
                hiddenDim,
                layers,
                heads,
                kvHeads,
                vocabSize,
                contextLength,
                ropeBase,
                rmsEpsilon,
                tiedOutput,
                llama3Rope);
    }

    /** Llama 3's frequency factors as its converter computes them: one per rotated pair. */
    public float[] ropeFreqFactors() {
        double factor = 32;
        double low = 1;
        double high = 4;
        double original = 8192;
        float[] out = new float[headSize() / 2];
        for (int i = 0; i < out.length; i++) {
            double freq = 1.0 / Math.pow(ropeBase, 2.0 * i / headSize());
            double wavelen = 2 * Math.PI / freq;
            if (wavelen < original / high) {
                out[i] = 1;
            } else if (wavelen > original / low) {
                out[i] = (float) factor;
            } else {
                double smooth = (original / wavelen - low) / (high - low);
                out[i] = (float) (1 / ((1 - smooth) / factor + smooth));
            }
        }
        return out;
    }
}
