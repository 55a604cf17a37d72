package dev.tandem.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SamplerTest {

    static Stream<Arguments> greedyCases() {
        return Stream.of(
                Arguments.of(new float[] {0.1f, 2f, -1f}, 1),
                Arguments.of(new float[] {5f, 5f, 1f}, 0), // tie: lowest index
                Arguments.of(new float[] {-3f, 7f, 7f, 7f}, 1),
                Arguments.of(new float[] {Float.NaN, -1f, -2f}, 1), // NaN never wins
                Arguments.of(new float[] {Float.NEGATIVE_INFINITY, Float.NEGATIVE_INFINITY}, 0),
                Arguments.of(new float[] {42f}, 0));
    }

    @ParameterizedTest
    @MethodSource("greedyCases")
    void greedyIsArgmaxLowestIndexOnTies(float[] logits, int expected) {
        assertEquals(expected, Sampler.sample(logits, SamplingParams.GREEDY, 17));
    }

    private static float[] randomLogits(long seed, int n) {
        SplitMix64 rng = new SplitMix64(seed);
        float[] logits = new float[n];
        for (int i = 0; i < n; i++) {
            logits[i] = rng.nextFloat() * 8 - 4;
        }
        return logits;
    }

    @Test
    void sameSeedPositionAndLogitsGiveSameToken() {
        float[] logits = randomLogits(1, 500);
        SamplingParams p = new SamplingParams(1.0, 0.95, 50, 1234);
        for (int pos = 0; pos < 50; pos++) {
            assertEquals(Sampler.sample(logits, p, pos), Sampler.sample(logits.clone(), p, pos));
        }
    }

    @Test
    void positionsAndSeedsGiveDifferentStreams() {
        float[] logits = new float[64]; // uniform: every draw is a fresh coin
        SamplingParams p = new SamplingParams(1.0, 1.0, 0, 99);
        int[] stream = new int[40];
        int[] other = new int[40];
        for (int pos = 0; pos < 40; pos++) {
            stream[pos] = Sampler.sample(logits, p, pos);
            other[pos] = Sampler.sample(logits, new SamplingParams(1.0, 1.0, 0, 100), pos);
        }
        long distinct = java.util.Arrays.stream(stream).distinct().count();
        assertTrue(distinct > 20, "positions should draw different tokens, got " + distinct + " distinct");
        assertNotEquals(java.util.Arrays.toString(stream), java.util.Arrays.toString(other));
    }

    @Test
    void topKOneAndTinyTopPAreGreedy() {
        for (long seed = 0; seed < 30; seed++) {
            float[] logits = randomLogits(seed + 1000, 300);
            int greedy = Sampler.sample(logits, SamplingParams.GREEDY, 0);
            assertEquals(greedy, Sampler.sample(logits, new SamplingParams(1.5, 1.0, 1, seed), (int) seed));
            assertEquals(greedy, Sampler.sample(logits, new SamplingParams(1.5, 1e-9, 0, seed), (int) seed));
            assertEquals(greedy, Sampler.sample(logits, new SamplingParams(0.7, 1e-9, 40, seed), (int) seed));
        }
    }

    @Test
    void topKAndTopPOnlyDrawFromTheKeptTokens() {
        // probabilities at temperature 1: token 3 ≈ 0.64, 2 ≈ 0.24, 1 ≈ 0.09, 0 ≈ 0.03
        float[] logits = {0f, 1f, 2f, 3f};
        for (int pos = 0; pos < 300; pos++) {
            int k2 = Sampler.sample(logits, new SamplingParams(1.0, 1.0, 2, 5), pos);
            assertTrue(k2 == 3 || k2 == 2, "top-k 2 drew " + k2);
            int p80 = Sampler.sample(logits, new SamplingParams(1.0, 0.8, 0, 5), pos); // 0.64 < 0.8 ≤ 0.88
            assertTrue(p80 == 3 || p80 == 2, "top-p 0.8 drew " + p80);
            int p60 = Sampler.sample(logits, new SamplingParams(1.0, 0.6, 0, 5), pos); // 0.64 ≥ 0.6
            assertEquals(3, p60);
        }
    }

    @Test
    void distributionFollowsProbabilitiesOverManySeeds() {
        float[] logits = {(float) Math.log(0.5), (float) Math.log(0.3), (float) Math.log(0.2)};
        int[] counts = new int[3];
        int draws = 20_000;
        for (int s = 0; s < draws; s++) {
            counts[Sampler.sample(logits, new SamplingParams(1.0, 1.0, 0, s), 7)]++;
        }
        assertEquals(0.5, counts[0] / (double) draws, 0.02);
        assertEquals(0.3, counts[1] / (double) draws, 0.02);
        assertEquals(0.2, counts[2] / (double) draws, 0.02);
        // temperature 2 flattens: p ∝ sqrt(0.5, 0.3, 0.2) = (0.4190, 0.3245, 0.2650) normalised
        int[] flat = new int[3];
        for (int s = 0; s < draws; s++) {
            flat[Sampler.sample(logits, new SamplingParams(2.0, 1.0, 0, s), 7)]++;
        }
        assertEquals(0.4190, flat[0] / (double) draws, 0.02);
        assertEquals(0.2650, flat[2] / (double) draws, 0.02);
    }

    @Test
    void inputIsNotMutated() {
        float[] logits = randomLogits(3, 1000);
        float[] copy = logits.clone();
        Sampler.sample(logits, new SamplingParams(0.8, 0.9, 40, 1), 3);
        Sampler.sample(logits, new SamplingParams(1.3, 0.5, 0, 1), 4);
        Sampler.sample(logits, new SamplingParams(1.0, 1.0, 0, 1), 5);
        Sampler.sample(logits, SamplingParams.GREEDY, 6);
        assertArrayEquals(copy, logits, 0f);
    }

    @Test
    void topKSelectionIsSortedWithLowerIdOnTies() {
        float[] logits = {0.1f, 0.3f, 0.3f, Float.NaN, 0.25f, 0.05f};
        assertArrayEquals(new int[] {1, 2, 4}, Sampler.topK(logits, 3));
        int[] all = {0, 1, 2, 3, 4, 5};
        Sampler.sortDescending(all, logits);
        assertArrayEquals(new int[] {1, 2, 4, 0, 5, 3}, all);
    }

    /** The bounded nucleus search must give what sorting the whole vocabulary would. */
    @Test
    void nucleusMatchesAFullSortReference() {
        for (long seed = 0; seed < 40; seed++) {
            float[] logits = randomLogits(seed, 2000);
            for (int i = 0; i < logits.length; i += 7) {
                logits[i] = logits[(i * 13) % logits.length]; // plenty of exact ties
            }
            double topP = 0.05 + 0.9 * (seed % 10) / 10.0;
            SamplingParams p = new SamplingParams(0.7, topP, 0, seed);
            assertEquals(
                    referenceNucleusSample(logits, 0.7, topP, seed, 11), Sampler.sample(logits, p, 11), "seed " + seed);
        }
    }

    /** Straight from the definition: sort everything, cut, renormalise, draw. */
    private static int referenceNucleusSample(
            float[] logits, double temperature, double topP, long seed, int position) {
        int n = logits.length;
        double max = Double.NEGATIVE_INFINITY;
        for (float l : logits) {
            max = Math.max(max, l / temperature);
        }
        double[] prob = new double[n];
        double total = 0;
        for (int i = 0; i < n; i++) {
            prob[i] = StrictMath.exp(logits[i] / temperature - max);
            total += prob[i];
        }
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(
                order, (a, b) -> logits[a] != logits[b] ? Float.compare(logits[b], logits[a]) : Integer.compare(a, b));
        int count = n;
        double cumulative = 0;
        for (int r = 0; r < n; r++) {
            cumulative += prob[order[r]];
            if (cumulative >= total * topP) {
                count = r + 1;
                break;
            }
        }
        double kept = 0;
        for (int r = 0; r < count; r++) {
            kept += prob[order[r]];
        }
        double target = SplitMix64.unitDouble(SplitMix64.at(seed, position)) * kept;
        double cdf = 0;
        for (int r = 0; r < count; r++) {
            cdf += prob[order[r]];
            if (target < cdf) {
                return order[r];
            }
        }
        return order[count - 1];
    }
}
