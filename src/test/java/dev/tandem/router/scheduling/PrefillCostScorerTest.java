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
 * {@code prefill-cost}: queued tokens plus 4× the prompt's uncached tokens, lowest best. Each row is a
 * prompt, prefill workers with a queue and a cache of it, the cost each gets and whom the scorer picks.
 */
class PrefillCostScorerTest {
    private static final Scorer COST = new PrefillCostScorer();

    /** A prefill worker with 16-token blocks, {@code queued} tokens reported queued. */
    private static WorkerView worker(String id, int queued) {
        return new WorkerView(
                new WorkerDescriptor(
                        id,
                        WorkerRole.PREFILL,
                        "m",
                        7,
                        "node-1",
                        8,
                        false,
                        new WorkerLoad(queued, 0, 0, 0),
                        new CacheSpec(16, false)),
                0,
                0);
    }

    /** A worker that announces no cache: it is never credited with one. */
    private static WorkerView noCache(String id, int queued) {
        return new WorkerView(
                new WorkerDescriptor(
                        id, WorkerRole.PREFILL, "m", 7, "node-1", 8, false, new WorkerLoad(queued, 0, 0, 0)),
                0,
                0);
    }

    private static SchedulingRequest prompt(int tokens, Map<String, Integer> cachedBlocks) {
        return new SchedulingRequest(null, null, tokens, 0, Set.of(), null, tokens / 16, cachedBlocks);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(
                        "nothing cached: the shortest queue",
                        prompt(1600, Map.of()),
                        List.of(worker("p1", 5000), worker("p2", 100)),
                        List.of(5000L + 4 * 1600, 100L + 4 * 1600),
                        "p2"),
                Arguments.of(
                        "the holder's queue is shorter than 4x the compute it saves: the holder",
                        prompt(1600, Map.of("p1", 90)), // 1440 cached, 160 to compute
                        List.of(worker("p1", 5000), worker("p2", 100)),
                        List.of(5000L + 4 * 160, 100L + 4 * 1600),
                        "p1"),
                Arguments.of(
                        "the holder's queue outweighs the saving: elsewhere",
                        prompt(1600, Map.of("p1", 90)),
                        List.of(worker("p1", 7000), worker("p2", 100)),
                        List.of(7000L + 4 * 160, 100L + 4 * 1600),
                        "p2"),
                Arguments.of(
                        "a whole cached prompt still computes its last token",
                        prompt(160, Map.of("p1", 10)),
                        List.of(worker("p1", 0), worker("p2", 0)),
                        List.of(4L, 4L * 160),
                        "p1"),
                Arguments.of(
                        "a worker without a cache is not credited with the index's blocks",
                        prompt(1600, Map.of("p1", 90)),
                        List.of(noCache("p1", 0), worker("p2", 10)),
                        List.of(4L * 1600, 10L + 4 * 1600),
                        "p1"),
                Arguments.of(
                        "equal costs: no opinion (the picker's round robin decides)",
                        prompt(320, Map.of()),
                        List.of(worker("p1", 50), worker("p2", 50)),
                        List.of(50L + 4 * 320, 50L + 4 * 320),
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void costsQueueAndUncachedTokensInOneCurrency(
            String name, SchedulingRequest request, List<WorkerView> workers, List<Long> costs, String best) {
        for (int i = 0; i < workers.size(); i++) {
            assertEquals(
                    costs.get(i),
                    PrefillCostScorer.cost(request, workers.get(i)),
                    workers.get(i).id());
        }
        double top = -1;
        String chosen = null;
        boolean tie = false;
        for (WorkerView w : workers) {
            double s = COST.score(request, w, workers);
            if (s > top) {
                top = s;
                chosen = w.id();
                tie = false;
            } else if (s == top) {
                tie = true;
            }
        }
        assertEquals(best, tie ? null : chosen);
        assertEquals(1.0, top, "the cheapest scores 1");
    }
}
