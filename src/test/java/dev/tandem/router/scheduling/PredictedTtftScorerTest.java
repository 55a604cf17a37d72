package dev.tandem.router.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code predicted-ttft}: (queued + 6 × uncached tokens) ÷ the worker's measured prefill rate, lowest
 * best, unless its first token comes later than max(2 × the soonest, the soonest + 8 s); a rate within 1.3× of the pool's median is the median's, a worker without a rate is taken at the
 * median, a pool without any counts tokens. Each row: a
 * prompt, prefill workers (queue, rate, cache), the seconds each is predicted and whom the scorer picks.
 */
class PredictedTtftScorerTest {
    private static final Scorer TTFT = new PredictedTtftScorer();

    /** A prefill worker with 16-token blocks, {@code queued} tokens queued, measuring {@code rate} tokens/s. */
    static WorkerView worker(String id, int queued, double rate) {
        return new WorkerView(
                new WorkerDescriptor(
                        id,
                        WorkerRole.PREFILL,
                        "m",
                        7,
                        "node-1",
                        8,
                        false,
                        WorkerLoad.prefill(queued, queued > 0 ? 1 : 0).withPrefillRate(rate),
                        new CacheSpec(16, false)),
                0,
                0);
    }

    static SchedulingRequest prompt(int tokens, Map<String, Integer> cachedBlocks) {
        return new SchedulingRequest(null, null, tokens, 0, Set.of(), null, tokens / 16, cachedBlocks);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(
                        "equal rates: the fewest tokens, as prefill-cost ranks them",
                        prompt(1600, Map.of()),
                        List.of(worker("p1", 5000, 10_000), worker("p2", 100, 10_000)),
                        List.of((5000 + 6 * 1600) / 10_000.0, (100 + 6 * 1600) / 10_000.0),
                        "p2"),
                Arguments.of(
                        "a worker twice as fast wins with more queued tokens",
                        prompt(1600, Map.of()),
                        List.of(worker("p1", 6000, 20_000), worker("p2", 2000, 10_000)),
                        List.of((6000 + 6 * 1600) / 20_000.0, (2000 + 6 * 1600) / 10_000.0),
                        "p1"),
                Arguments.of(
                        "the holder of the prefix, on the slower worker, still wins when the saving outweighs it",
                        prompt(1600, Map.of("p2", 90)), // p2: 1440 cached, 160 to compute
                        List.of(worker("p1", 0, 20_000), worker("p2", 1000, 10_000)),
                        List.of(6 * 1600 / 20_000.0, (1000 + 6 * 160) / 10_000.0),
                        "p2"),
                Arguments.of(
                        "a long prompt queued in time: a short prompt goes where it does not wait behind it",
                        prompt(500, Map.of("p1", 31)),
                        List.of(worker("p1", 100_000, 10_000), worker("p2", 3_000, 10_000)),
                        // p1 is past the bound (10 s against 0.35 s + 8 s): after p2, by its first token
                        List.of((3_000 + 6 * 500) / 10_000.0 + (100_000 + 4) / 10_000.0, (3_000 + 6 * 500) / 10_000.0),
                        "p2"),
                Arguments.of(
                        "the holder of a prefix behind a long prompt: recomputing wins past the soonest TTFT + 8 s",
                        prompt(41_000, Map.of("p1", 1187)), // p1: 18,992 cached; 15.7 s against 5.9 s + 8 s
                        List.of(worker("p1", 88_000, 7_000), worker("p2", 0, 7_000)),
                        List.of(6 * 41_000 / 7_000.0 + (88_000 + 22_008) / 7_000.0, 6 * 41_000 / 7_000.0),
                        "p2"),
                Arguments.of(
                        "within the bound the trade stands: 5.2 s against 1.1 s is over twice, not 8 s more",
                        prompt(8_000, Map.of("p1", 400)), // p1: 6,400 cached
                        List.of(worker("p1", 35_000, 7_000), worker("p2", 0, 7_000)),
                        List.of((35_000 + 6 * 1_600) / 7_000.0, 6 * 8_000 / 7_000.0),
                        "p1"),
                Arguments.of(
                        "a worker with no rate yet is taken at the pool's median",
                        prompt(1000, Map.of()),
                        List.of(worker("p1", 0, 0), worker("p2", 0, 10_000), worker("p3", 0, 30_000)),
                        List.of(6000 / 20_000.0, 6000 / 10_000.0, 6000 / 30_000.0),
                        "p3"),
                Arguments.of(
                        "rates within the band are the median's: what prompt sizes did to a rate is not speed",
                        prompt(1000, Map.of()),
                        List.of(worker("p1", 5000, 8_000), worker("p2", 6000, 10_000)),
                        List.of((5000 + 6 * 1000) / 9_000.0, (6000 + 6 * 1000) / 9_000.0),
                        "p1"),
                Arguments.of(
                        "no rates at all: tokens as time",
                        prompt(1000, Map.of()),
                        List.of(worker("p1", 300, 0), worker("p2", 200, 0)),
                        List.of(6300.0, 6200.0),
                        "p2"),
                Arguments.of(
                        "equal predictions: no opinion",
                        prompt(320, Map.of()),
                        List.of(worker("p1", 50, 8_000), worker("p2", 50, 8_000)),
                        List.of((50 + 6 * 320) / 8_000.0, (50 + 6 * 320) / 8_000.0),
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void predictsSecondsAtEachWorkersOwnRate(
            String name, SchedulingRequest request, List<WorkerView> workers, List<Double> seconds, String best) {
        double[] values = new PredictedTtftScorer().values(request, workers);
        for (int i = 0; i < workers.size(); i++) {
            assertEquals(seconds.get(i), values[i], 1e-12, workers.get(i).id());
        }
        double[] scores = TTFT.scores(request, workers);
        double top = -1;
        String chosen = null;
        boolean tie = false;
        for (int i = 0; i < scores.length; i++) {
            assertEquals(scores[i], TTFT.score(request, workers.get(i), workers), 1e-12);
            if (scores[i] > top) {
                top = scores[i];
                chosen = workers.get(i).id();
                tie = false;
            } else if (scores[i] == top) {
                tie = true;
            }
        }
        assertEquals(best, tie ? null : chosen);
        assertEquals(1.0, top, "the fastest scores 1");
    }
}
