package dev.tandem.engine.gguf;

import dev.tandem.engine.HalfFloats;

/**
 * A batch of activation vectors in the form llama.cpp's CPU backend gives them to a weight type's dot
 * product (its {@code vec_dot_type}): floats for F32; f16 or bf16 values for F16 and BF16 weights; 8-bit
 * blocks of 32 with an f16 scale (Q8_0) for Q8_0, Q4_0 and Q5_0; 8-bit blocks of 256 with a float scale and
 * sums per 16 (Q8_K) for the K-quants. Rounding the activations the same way is what makes a quantized
 * model's logits agree with llama.cpp's beyond the order of its float sums.
 */
final class GgmlActivations {
    /** The form, named by the type llama.cpp converts to. */
    enum Form {
        F32,
        F16,
        BF16,
        Q8_0,
        Q8_K
    }

    final Form form;
    /** F32, F16 and BF16: the (rounded) values, one array per vector. */
    final float[][] values;
    /** Q8_0 and Q8_K: the 8-bit values. */
    final float[][] qs; // integer values, as floats: every product and block sum stays exact
    /** Q8_0 and Q8_K: each block's scale (Q8_0's already rounded through f16). */
    final float[][] scales;
    /** Q8_K: the sum of each 16 values. */
    final int[][] sums16;

    private GgmlActivations(Form form, float[][] values, float[][] qs, float[][] scales, int[][] sums16) {
        this.form = form;
        this.values = values;
        this.qs = qs;
        this.scales = scales;
        this.sums16 = sums16;
    }

    static Form formFor(GgmlType weights) {
        return switch (weights) {
            case F32 -> Form.F32;
            case F16 -> Form.F16;
            case BF16 -> Form.BF16;
            case Q8_0, Q4_0, Q5_0 -> Form.Q8_0;
            case Q4_K, Q6_K -> Form.Q8_K;
            default -> throw new GgufFormatException("tensors of type " + weights + " are not supported");
        };
    }

    /** The first {@code batch} vectors of {@code x} ({@code cols} values each) in {@code form}. */
    static GgmlActivations of(Form form, float[][] x, int batch, int cols) {
        return switch (form) {
            case F32 -> new GgmlActivations(form, x, null, null, null);
            case F16, BF16 -> {
                float[][] v = new float[batch][cols];
                for (int b = 0; b < batch; b++) {
                    for (int j = 0; j < cols; j++) {
                        v[b][j] = form == Form.F16
                                ? HalfFloats.half(HalfFloats.toHalf(x[b][j]))
                                : HalfFloats.bfloat16(HalfFloats.toBfloat16(x[b][j]));
                    }
                }
                yield new GgmlActivations(form, v, null, null, null);
            }
            case Q8_0 -> q8_0(x, batch, cols);
            case Q8_K -> q8_K(x, batch, cols);
        };
    }

    /**
     * x86's {@code quantize_row_q8_0}: d = amax / 127 stored as f16, values x · (127 / amax) rounded to
     * nearest even (the AVX rounding mode), not through the f16 scale.
     */
    private static GgmlActivations q8_0(float[][] x, int batch, int cols) {
        float[][] qs = new float[batch][cols];
        float[][] d = new float[batch][cols / 32];
        for (int b = 0; b < batch; b++) {
            for (int k = 0; k < cols / 32; k++) {
                float amax = 0;
                for (int j = 0; j < 32; j++) {
                    amax = Math.max(amax, Math.abs(x[b][k * 32 + j]));
                }
                float scale = amax / 127.0f;
                d[b][k] = HalfFloats.half(HalfFloats.toHalf(scale));
                float id = amax != 0.0f ? 127.0f / amax : 0.0f;
                for (int j = 0; j < 32; j++) {
                    qs[b][k * 32 + j] = (float) Math.rint(x[b][k * 32 + j] * id);
                }
            }
        }
        return new GgmlActivations(Form.Q8_0, null, qs, d, null);
    }

    /**
     * {@code quantize_row_q8_K_ref} (x86 uses it as is): iscale = −127 / the value of largest magnitude,
     * values rounded to nearest even and capped at 127, d = 1 / iscale, and the sum of every 16.
     */
    private static GgmlActivations q8_K(float[][] x, int batch, int cols) {
        float[][] qs = new float[batch][cols];
        float[][] d = new float[batch][cols / 256];
        int[][] sums = new int[batch][cols / 16];
        for (int b = 0; b < batch; b++) {
            for (int k = 0; k < cols / 256; k++) {
                float max = 0;
                float amax = 0;
                for (int j = 0; j < 256; j++) {
                    float v = x[b][k * 256 + j];
                    if (Math.abs(v) > amax) {
                        amax = Math.abs(v);
                        max = v;
                    }
                }
                if (amax == 0) {
                    continue; // d = 0, values 0
                }
                float iscale = -127.0f / max;
                for (int j = 0; j < 256; j++) {
                    int v = (int) Math.rint(iscale * x[b][k * 256 + j]);
                    qs[b][k * 256 + j] = Math.min(127, v);
                }
                for (int g = 0; g < 16; g++) {
                    int s = 0;
                    for (int j = 0; j < 16; j++) {
                        s += (int) qs[b][k * 256 + g * 16 + j];
                    }
                    sums[b][k * 16 + g] = s;
                }
                d[b][k] = 1 / iscale;
            }
        }
        return new GgmlActivations(Form.Q8_K, null, qs, d, sums);
    }
}
