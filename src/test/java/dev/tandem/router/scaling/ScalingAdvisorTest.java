package dev.tandem.router.scaling;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.config.ScalingSettings;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The advisor's arithmetic, table-driven: a snapshot in, the worker counts it implies out. */
class ScalingAdvisorTest {
    /** Drain in 1 s, prefill at 50 %, batches at 50 %, KV at 50 %, at least 1 of each, no prior. */
    static final ScalingSettings TARGETS = new ScalingSettings(1000, 0.5, 0.5, 0.5, 30, 1, 0);

    private static final long GB = 1L << 30;

    /**
     * A model's snapshot: uncached prompt tokens/s, queued prompt tokens, prefill workers and their measured
     * rate; active sequences and KV used on 2 decode workers of batch 64 and 10 GB KV each.
     */
    static ScalingSnapshot load(double promptRate, long queued, int prefill, double perWorker, long seqs, long kv) {
        return new ScalingSnapshot("m", promptRate, 0, queued, prefill, perWorker, 2, seqs, 64, kv, 10 * GB);
    }

    static Stream<Arguments> table() {
        return Stream.of(
                // name, snapshot, targets, prefill, decode
                Arguments.of("zero load: the floor", load(0, 0, 4, 10_000, 0, 0), TARGETS, 1, 1),
                Arguments.of("zero load, floor 2", load(0, 0, 4, 10_000, 0, 0), withMin(2), 2, 2),
                Arguments.of("floor 0 scales to zero", load(0, 0, 4, 10_000, 0, 0), withMin(0), 0, 0),
                // 20k tok/s ÷ (10k × 0.5) = 4
                Arguments.of("rate", load(20_000, 0, 1, 10_000, 0, 0), TARGETS, 4, 1),
                Arguments.of("2x rate, 2x workers", load(40_000, 0, 1, 10_000, 0, 0), TARGETS, 8, 1),
                Arguments.of("a hair over a whole need rounds up", load(20_001, 0, 1, 10_000, 0, 0), TARGETS, 5, 1),
                // 30k queued ÷ (10k tok/s × 1 s) = 3, plus 20k ÷ 5k = 4
                Arguments.of("queue adds drain workers", load(20_000, 30_000, 2, 10_000, 0, 0), TARGETS, 7, 1),
                Arguments.of("no measured rate: the pool kept", load(20_000, 30_000, 3, 0, 0, 0), TARGETS, 3, 1),
                Arguments.of("no rate, no pool: the floor", load(20_000, 30_000, 0, 0, 0, 0), TARGETS, 1, 1),
                Arguments.of("no rate: the prior", load(20_000, 0, 3, 0, 0, 0), withPrior(5_000), 8, 1),
                Arguments.of("measured beats the prior", load(20_000, 0, 3, 10_000, 0, 0), withPrior(5_000), 4, 1),
                // 96 sequences ÷ (64 × 0.5) = 3
                Arguments.of("batch occupancy", load(0, 0, 1, 10_000, 96, GB), TARGETS, 1, 3),
                Arguments.of("2x sequences", load(0, 0, 1, 10_000, 192, GB), TARGETS, 1, 6),
                // 40 GB ÷ (10 GB × 0.5) = 8 beats 96 ÷ 32 = 3
                Arguments.of("KV use dominates", load(0, 0, 1, 10_000, 96, 40 * GB), TARGETS, 1, 8),
                Arguments.of("both", load(20_000, 0, 1, 10_000, 96, 40 * GB), TARGETS, 4, 8));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void recommends(String name, ScalingSnapshot s, ScalingSettings targets, int prefill, int decode) {
        ScalingRecommendation r = ScalingAdvisor.advise(s, targets);
        assertEquals(prefill, r.prefillWorkers(), "prefill");
        assertEquals(decode, r.decodeWorkers(), "decode");
        assertEquals(decode == 0 ? prefill : (double) prefill / decode, r.pdRatio(), 1e-9, "ratio");
    }

    @ParameterizedTest(name = "{0} tok/s")
    @MethodSource("rates")
    void doublingTheArrivalRateDoublesPrefill(double rate) {
        ScalingRecommendation base = ScalingAdvisor.advise(load(rate, 0, 1, 7_000, 0, 0), TARGETS);
        ScalingRecommendation twice = ScalingAdvisor.advise(load(2 * rate, 0, 1, 7_000, 0, 0), TARGETS);
        assertEquals(2 * base.prefillFromRate(), twice.prefillFromRate(), 1e-9);
        // Rounding up: twice the need is between 2n-1 and 2n workers.
        int n = base.prefillWorkers();
        assertEquals(true, twice.prefillWorkers() >= 2 * n - 1 && twice.prefillWorkers() <= 2 * n, base + " " + twice);
    }

    static Stream<Double> rates() {
        return Stream.of(3_500.0, 10_000.0, 35_000.0, 123_456.0);
    }

    @Test
    void unknownDecodeShapeGivesTheFloor() {
        ScalingSnapshot s = new ScalingSnapshot("m", 0, 0, 0, 1, 10_000, 0, 50, 0, GB, 0);
        assertEquals(1, ScalingAdvisor.advise(s, TARGETS).decodeWorkers());
    }

    private static ScalingSettings withMin(int min) {
        return new ScalingSettings(1000, 0.5, 0.5, 0.5, 30, min, 0);
    }

    private static ScalingSettings withPrior(double prior) {
        return new ScalingSettings(1000, 0.5, 0.5, 0.5, 30, 1, prior);
    }
}
