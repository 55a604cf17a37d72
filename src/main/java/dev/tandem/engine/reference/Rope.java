package dev.tandem.engine.reference;

/**
 * Rotary position embedding: which pairs of a head rotate and by what angle. run.c's angles are
 * pos · 1/powf(10000, i/headSize) rotating adjacent pairs; ggml's are pos · θ^i with θ = base^(−2/dims)
 * multiplied up in float (as its cache is), each divided by the pair's frequency factor (Llama 3's
 * {@code rope_freqs}), rotating adjacent pairs (llama, whose Q and K rows GGUF converters permute
 * to match) or each dimension with the one half a head away (NEOX: Qwen2).
 */
public final class Rope {
    private final int headSize;
    private final boolean runC;
    private final boolean neox;
    private final float thetaScale;
    private final float[] freqFactors;

    private Rope(int headSize, boolean runC, boolean neox, float base, float[] freqFactors) {
        if (freqFactors != null && freqFactors.length != headSize / 2) {
            throw new IllegalArgumentException(
                    freqFactors.length + " frequency factors for heads of " + headSize + " (one per pair)");
        }
        this.headSize = headSize;
        this.runC = runC;
        this.neox = neox;
        this.thetaScale = (float) StrictMath.pow(base, -2.0f / headSize);
        this.freqFactors = freqFactors == null ? null : freqFactors.clone();
    }

    /** run.c's RoPE: base 10000, adjacent pairs. */
    public static Rope runC(int headSize) {
        return new Rope(headSize, true, false, 10000.0f, null);
    }

    /** ggml's RoPE over whole heads; {@code freqFactors} (one per pair) may be null. */
    public static Rope ggml(int headSize, float base, boolean neox, float[] freqFactors) {
        return new Rope(headSize, false, neox, base, freqFactors);
    }

    /** The cos and sin of each pair's angle at {@code pos}, into [o, o + headSize/2). */
    public void angles(int pos, float[] cos, float[] sin, int o) {
        if (runC) {
            TransformerMath.ropeAngles(pos, headSize, cos, sin, o);
            return;
        }
        float theta = pos;
        for (int i = 0; i < headSize / 2; i++) {
            float t = freqFactors == null ? theta : theta / freqFactors[i];
            cos[o + i] = (float) StrictMath.cos(t);
            sin[o + i] = (float) StrictMath.sin(t);
            theta *= thetaScale;
        }
    }

    /** Rotates every head of the {@code size} floats at {@code vo} by the angles at {@code co}. */
    public void rotate(float[] v, int vo, int size, float[] cos, float[] sin, int co) {
        if (!neox) {
            TransformerMath.rope(v, vo, size, headSize, cos, sin, co);
            return;
        }
        int half = headSize / 2;
        for (int h = vo; h < vo + size; h += headSize) {
            for (int i = 0; i < half; i++) {
                float c = cos[co + i];
                float s = sin[co + i];
                float v0 = v[h + i];
                float v1 = v[h + i + half];
                v[h + i] = v0 * c - v1 * s;
                v[h + i + half] = v0 * s + v1 * c;
            }
        }
    }
}
