package dev.tandem.engine.reference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;
import dev.tandem.engine.SplitMix64;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Expected values are computed by hand (and double-checked in double precision with a few lines of Python). */
class TransformerMathTest {
    private static final float TOL = 1e-5f;

    static Stream<Arguments> rmsnormCases() {
        return Stream.of(
                // ss = (1+4+9+16)/4 + 1e-5 = 7.50001, 1/sqrt(ss) = 0.36514813
                Arguments.of(new float[] {1, 2, 3, 4}, new float[] {1, 1, 1, 1}, new float[] {
                    0.36514813f, 0.73029626f, 1.0954444f, 1.4605925f
                }),
                // same x, weights scale each output
                Arguments.of(new float[] {1, 2, 3, 4}, new float[] {2, 0.5f, 1, -1}, new float[] {
                    0.73029626f, 0.36514813f, 1.0954444f, -1.4605925f
                }),
                // ss = 25/2 + 1e-5, 1/sqrt(ss) = 0.28284260
                Arguments.of(new float[] {3, 4}, new float[] {1, 1}, new float[] {0.8485278f, 1.1313704f}),
                // all zeros: only eps, output stays zero
                Arguments.of(new float[] {0, 0, 0}, new float[] {1, 1, 1}, new float[] {0, 0, 0}));
    }

    @ParameterizedTest
    @MethodSource("rmsnormCases")
    void rmsnormMatchesHandValues(float[] x, float[] w, float[] expected) {
        float[] out = new float[x.length + 1];
        TransformerMath.rmsnorm(out, 1, x, 0, w, 0, x.length);
        float[] got = java.util.Arrays.copyOfRange(out, 1, out.length);
        assertArrayEquals(expected, got, TOL);
    }

    @Test
    void rmsnormInPlace() {
        float[] x = {3, 4};
        TransformerMath.rmsnorm(x, 0, x, 0, new float[] {1, 1}, 0, 2);
        assertArrayEquals(new float[] {0.8485278f, 1.1313704f}, x, TOL);
    }

    static Stream<Arguments> ropeCases() {
        return Stream.of(
                // position 0: no rotation
                Arguments.of(0, 4, new float[] {1, 2, 3, 4}, new float[] {1, 2, 3, 4}),
                // head 4: pair 0 turns by pos·1, pair 1 by pos·10000^(-2/4) = pos·0.01
                // (1,0) by 1 rad -> (cos 1, sin 1); (0,1) by 0.01 -> (-sin .01, cos .01)
                Arguments.of(
                        1, 4, new float[] {1, 0, 0, 1}, new float[] {0.5403023f, 0.84147098f, -0.00999983f, 0.99995f}),
                // (1,2) by 2 rad: (cos2 - 2 sin2, sin2 + 2 cos2); (3,4) by 0.02: (3cos - 4sin, 3sin + 4cos)
                Arguments.of(
                        2, 4, new float[] {1, 2, 3, 4}, new float[] {-2.2347417f, 0.07700375f, 2.9194054f, 4.059196f}),
                // head 2, two heads: every pair turns by pos·1 (angle restarts in each head)
                Arguments.of(
                        1, 2, new float[] {1, 0, 1, 0}, new float[] {0.5403023f, 0.84147098f, 0.5403023f, 0.84147098f
                        }));
    }

    @ParameterizedTest
    @MethodSource("ropeCases")
    void ropeMatchesHandValues(int pos, int headSize, float[] v, float[] expected) {
        float[] cos = new float[headSize / 2];
        float[] sin = new float[headSize / 2];
        TransformerMath.ropeAngles(pos, headSize, cos, sin, 0);
        float[] got = v.clone();
        TransformerMath.rope(got, 0, got.length, headSize, cos, sin, 0);
        assertArrayEquals(expected, got, TOL);
    }

    @Test
    void attentionMatchesHandValues() {
        // one layer, one KV head of size 2, blocks of 2 positions so the 3 positions span two blocks
        KvCache cache = new KvCache(new KvLayout(1, 1, 2, 2));
        cache.ensureCapacity(3);
        float[][] keys = {{1, 0}, {0, 1}, {1, 1}};
        float[][] values = {{1, 2}, {3, 4}, {5, 6}};
        for (int t = 0; t < 3; t++) {
            System.arraycopy(keys[t], 0, cache.blockFor(t), cache.offset(0, 0, t), 2);
            System.arraycopy(values[t], 0, cache.blockFor(t), cache.offset(0, 1, t), 2);
        }
        cache.setLength(3);
        float[] q = {1, 2};
        float[] att = new float[3];
        float[] out = new float[2];
        // scores q·k/sqrt2 = (1, 2, 3)/1.41421356; softmax = (0.14002925, 0.28399541, 0.57597535)
        // out = 0.14002925·(1,2) + 0.28399541·(3,4) + 0.57597535·(5,6) = (3.8718922, 4.8718922)
        TransformerMath.attentionHead(q, 0, cache, 0, 0, 2, att, out, 0);
        assertArrayEquals(new float[] {0.14002925f, 0.28399541f, 0.57597535f}, att, TOL);
        assertArrayEquals(new float[] {3.8718922f, 4.8718922f}, out, TOL);
        // at position 0 only the first value is visible
        TransformerMath.attentionHead(q, 0, cache, 0, 0, 0, att, out, 0);
        assertArrayEquals(new float[] {1, 2}, out, 0f);
    }

    /** All heads at once, and one head at a time, against run.c's plain loops: bit-identical, with or without GQA. */
    @ParameterizedTest
    @MethodSource("attentionShapes")
    void attentionIsBitIdenticalToPlainLoops(int heads, int kvHeads, int pos) {
        int headSize = 12;
        KvCache cache = new KvCache(new KvLayout(2, kvHeads, headSize, 8));
        cache.ensureCapacity(pos + 1);
        SplitMix64 rng = new SplitMix64(97L * pos + heads + kvHeads);
        int kvDim = kvHeads * headSize;
        for (int t = 0; t <= pos; t++) {
            for (int kv = 0; kv < 2; kv++) {
                for (int i = 0; i < kvDim; i++) {
                    cache.blockFor(t)[cache.offset(1, kv, t) + i] = rng.nextFloat() * 2 - 1;
                }
            }
        }
        cache.setLength(pos + 1);
        float[] q = new float[heads * headSize];
        for (int i = 0; i < q.length; i++) {
            q[i] = rng.nextFloat() * 2 - 1;
        }
        int kvMul = heads / kvHeads;
        float[] expected = new float[q.length];
        float[] scores = new float[pos + 1];
        for (int h = 0; h < heads; h++) {
            int kvo = (h / kvMul) * headSize;
            for (int t = 0; t <= pos; t++) {
                float s = 0.0f;
                for (int i = 0; i < headSize; i++) {
                    s += q[h * headSize + i] * cache.blockFor(t)[cache.offset(1, 0, t) + kvo + i];
                }
                scores[t] = s / TransformerMath.sqrtf(headSize);
            }
            TransformerMath.softmax(scores, 0, pos + 1);
            for (int t = 0; t <= pos; t++) {
                for (int i = 0; i < headSize; i++) {
                    expected[h * headSize + i] += scores[t] * cache.blockFor(t)[cache.offset(1, 1, t) + kvo + i];
                }
            }
        }
        float[] all = new float[q.length];
        TransformerMath.attention(q, cache, 1, heads, kvMul, pos, new float[heads][pos + 1], new float[q.length], all);
        assertArrayEquals(expected, all, 0f);
        float[] single = new float[q.length];
        for (int h = 0; h < heads; h++) {
            TransformerMath.attentionHead(
                    q, h * headSize, cache, 1, h / kvMul, pos, new float[pos + 1], single, h * headSize);
        }
        assertArrayEquals(expected, single, 0f);
    }

    static Stream<Arguments> attentionShapes() {
        return Stream.of(
                Arguments.of(3, 3, 0),
                Arguments.of(3, 3, 7),
                Arguments.of(3, 3, 30),
                Arguments.of(4, 2, 19),
                Arguments.of(4, 1, 40));
    }

    @Test
    void softmaxAndSilu() {
        float[] x = {1, 2, 3};
        TransformerMath.softmax(x, 0, 3);
        // e^(-2), e^(-1), 1 over their sum 1.5032147
        assertArrayEquals(new float[] {0.09003057f, 0.24472847f, 0.66524096f}, x, TOL);
        assertEquals(0.7310586f, TransformerMath.silu(1), TOL); // 1·σ(1)
        assertEquals(1.7615942f, TransformerMath.silu(2), TOL); // 2·σ(2)
        assertEquals(-0.26894142f, TransformerMath.silu(-1), TOL); // -1·σ(-1)
    }

    @Test
    void matmulMatchesHandValues() {
        float[] w = {1, 2, 3, 4, 5, 6}; // 2 × 3
        float[] out = new float[2];
        TransformerMath.matmul(out, new float[] {1, 0, -1}, w, 3, 2);
        assertArrayEquals(new float[] {-2, -2}, out, 0f);
    }

    /** Whatever the batch and the tiling, each row · sequence is the plain j-order float sum of matmul. */
    @ParameterizedTest
    @MethodSource("shapes")
    void matmulBlocksIsBitIdenticalToRowDots(int n, int d, int batch) {
        SplitMix64 rng = new SplitMix64(31L * n + d + batch);
        float[] w = new float[n * d];
        for (int i = 0; i < w.length; i++) {
            w[i] = rng.nextFloat() * 2 - 1;
        }
        float[][] x = new float[batch][n];
        for (float[] row : x) {
            for (int j = 0; j < n; j++) {
                row[j] = rng.nextFloat() * 2 - 1;
            }
        }
        float[][] out = new float[batch][d];
        TransformerMath.matmulBlocks(out, x, TransformerMath.rowBlocks(w, d, n), n, d, batch);
        float[] expected = new float[d];
        for (int b = 0; b < batch; b++) {
            TransformerMath.matmul(expected, x[b], w, n, d);
            for (int i = 0; i < d; i++) {
                assertEquals(Float.floatToIntBits(expected[i]), Float.floatToIntBits(out[b][i]), "b=" + b + " i=" + i);
            }
        }
    }

    static Stream<Arguments> shapes() {
        return Stream.of(
                Arguments.of(37, 11, 1),
                Arguments.of(37, 11, 3),
                Arguments.of(64, 1100, 1),
                Arguments.of(64, 1100, 5),
                Arguments.of(3, 513, 8),
                Arguments.of(300, 2, 2));
    }
}
