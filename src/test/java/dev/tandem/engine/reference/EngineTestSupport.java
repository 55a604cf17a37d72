package dev.tandem.engine.reference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.Sampler;
import dev.tandem.engine.SamplingParams;
import java.util.List;

final class EngineTestSupport {
    private EngineTestSupport() {}

    static int[] bits(float[] values) {
        int[] out = new int[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = Float.floatToIntBits(values[i]);
        }
        return out;
    }

    static void assertBitIdentical(float[] expected, float[] actual, String what) {
        assertArrayEquals(bits(expected), bits(actual), what);
    }

    /** Greedy generation of {@code steps} tokens after the prompt: prefill, then decode steps of batch 1. */
    static int[] generate(Engine engine, int[] prompt, int steps) {
        KvCache cache = engine.newCache();
        float[] logits = engine.prefill(cache, prompt, () -> false);
        int[] out = new int[steps];
        for (int i = 0; i < steps; i++) {
            out[i] = Sampler.sample(logits, SamplingParams.GREEDY, cache.length());
            if (i + 1 < steps) {
                logits = engine.decodeStep(List.of(cache), new int[] {out[i]})[0];
            }
        }
        return out;
    }

    /** {@code count} floats drawn uniformly from [-1, 1). */
    static float[] uniform(dev.tandem.engine.SplitMix64 rng, int count) {
        float[] v = new float[count];
        for (int i = 0; i < count; i++) {
            v[i] = rng.nextFloat() * 2 - 1;
        }
        return v;
    }

    /** {@code rows} rows of {@code n} floats drawn uniformly from [-1, 1). */
    static float[][] uniform(dev.tandem.engine.SplitMix64 rng, int rows, int n) {
        float[][] x = new float[rows][];
        for (int b = 0; b < rows; b++) {
            x[b] = uniform(rng, n);
        }
        return x;
    }
}
