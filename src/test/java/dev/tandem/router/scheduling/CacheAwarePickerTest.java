package dev.tandem.router.scheduling;

import static dev.tandem.router.scheduling.Workers.w;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.config.PickerSettings.CacheAware;
import dev.tandem.protocol.WorkerView;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * SGLang's cache-aware rule, branch by branch, at the edges of its thresholds (SGLang's defaults:
 * cache-threshold 0.3, balance-abs-threshold 64, balance-rel-threshold 1.5). Each row: what it shows, the
 * workers with their requests in flight, the prompt's full blocks, the routed prefix per worker (the
 * leading blocks this router routed there), the tree sizes, the tick, and the choice.
 */
class CacheAwarePickerTest {
    private static final Picker PICKER = new CacheAwarePicker(CacheAware.DEFAULTS);

    private static List<WorkerView> loads(int p1, int p2, int p3) {
        return List.of(w("p1", p1), w("p2", p2), w("p3", p3));
    }

    static Stream<Arguments> cases() {
        Map<String, Integer> p3HoldsAll = Map.of("p3", 10);
        Map<String, Long> p1Smallest = Map.of("p2", 50L, "p3", 80L);
        return Stream.of(
                // imbalanced: max - min > 64 and max > 1.5 min → the least loaded, whatever is routed where
                Arguments.of("imbalanced: the least loaded", loads(0, 70, 65), 10, p3HoldsAll, p1Smallest, 0, "p1"),
                Arguments.of(
                        "imbalanced: a difference of 65, one over the absolute threshold",
                        loads(0, 65, 10),
                        10,
                        p3HoldsAll,
                        p1Smallest,
                        0,
                        "p1"),
                Arguments.of(
                        "imbalanced: 196 is over 130 × 1.5 = 195 (and 66 over 64)",
                        loads(130, 196, 150),
                        10,
                        p3HoldsAll,
                        p1Smallest,
                        0,
                        "p1"),
                Arguments.of(
                        "balanced: a difference of exactly 64 is not over the absolute threshold",
                        loads(0, 64, 64),
                        10,
                        p3HoldsAll,
                        p1Smallest,
                        0,
                        "p3"),
                Arguments.of(
                        "balanced: 195 is not over 130 × 1.5, though 65 is over 64",
                        loads(130, 195, 195),
                        10,
                        p3HoldsAll,
                        p1Smallest,
                        0,
                        "p3"),
                Arguments.of(
                        "balanced: 40 is over 10 × 1.5 but 30 not over 64",
                        loads(10, 40, 40),
                        10,
                        p3HoldsAll,
                        p1Smallest,
                        0,
                        "p3"),
                Arguments.of(
                        "imbalanced: ties among the least loaded go round-robin (tick 1)",
                        loads(0, 0, 100),
                        10,
                        p3HoldsAll,
                        p1Smallest,
                        1,
                        "p2"),
                // balanced, match over the threshold → the longest routed prefix
                Arguments.of(
                        "match: the longest routed prefix, 4 of 10 > 0.3",
                        loads(0, 3, 9),
                        10,
                        Map.of("p2", 2, "p3", 4),
                        p1Smallest,
                        0,
                        "p3"),
                Arguments.of(
                        "match: just over the threshold, 4 of 13 (0.308)",
                        loads(0, 0, 0),
                        13,
                        Map.of("p3", 4),
                        p1Smallest,
                        0,
                        "p3"),
                Arguments.of(
                        "match: equal matches go to the fewer in flight",
                        loads(0, 5, 2),
                        10,
                        Map.of("p2", 10, "p3", 10),
                        p1Smallest,
                        0,
                        "p3"),
                Arguments.of(
                        "match: equal matches and loads go round-robin (tick 1)",
                        loads(0, 2, 2),
                        10,
                        Map.of("p2", 10, "p3", 10),
                        p1Smallest,
                        1,
                        "p3"),
                // balanced, match at or under the threshold → the smallest tree
                Arguments.of(
                        "smallest tree: exactly 0.3 (3 of 10) is not over the threshold",
                        loads(0, 0, 0),
                        10,
                        Map.of("p3", 3),
                        p1Smallest,
                        0,
                        "p1"),
                Arguments.of(
                        "smallest tree: nothing routed yet, a worker never routed to has none",
                        loads(5, 0, 0),
                        10,
                        Map.of(),
                        Map.of("p1", 3L, "p3", 1L),
                        0,
                        "p2"),
                Arguments.of(
                        "smallest tree: a prompt without a full block matches nothing",
                        loads(0, 0, 0),
                        0,
                        p3HoldsAll,
                        p1Smallest,
                        0,
                        "p1"),
                Arguments.of(
                        "smallest tree: equal sizes go round-robin by the tick (tick 5 of 3 → the third)",
                        loads(0, 0, 0),
                        10,
                        Map.of(),
                        Map.of(),
                        5,
                        "p3"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void picksAsSglangsRouterDoes(
            String name,
            List<WorkerView> workers,
            int promptBlocks,
            Map<String, Integer> routedPrefix,
            Map<String, Long> treeBlocks,
            long tick,
            String expected) {
        SchedulingRequest request = new SchedulingRequest(
                        null, null, promptBlocks * 16, tick, Set.of(), null, promptBlocks, Map.of())
                .withRoutedPrefixes(routedPrefix, treeBlocks);
        List<Picker.ScoredWorker> scored =
                workers.stream().map(v -> new Picker.ScoredWorker(v, 0)).toList();
        assertEquals(expected, PICKER.pick(request, scored).id());
    }

    @Test
    void thresholdsAreParameters() {
        // The same routed prefix of 4 in 10 blocks: over a 0.3 threshold, not over 0.5.
        SchedulingRequest request = new SchedulingRequest(null, null, 160, 0, Set.of(), null, 10, Map.of())
                .withRoutedPrefixes(Map.of("p2", 4), Map.of("p2", 4L));
        List<Picker.ScoredWorker> idle =
                List.of(new Picker.ScoredWorker(w("p1", 0), 0), new Picker.ScoredWorker(w("p2", 0), 0));
        assertEquals("p2", PICKER.pick(request, idle).id());
        assertEquals(
                "p1",
                new CacheAwarePicker(new CacheAware(0.5, 64, 1.5, 1))
                        .pick(request, idle)
                        .id());
        // An absolute threshold of 0 and a relative one of 1: any difference is an imbalance.
        List<Picker.ScoredWorker> p2Busier =
                List.of(new Picker.ScoredWorker(w("p1", 0), 0), new Picker.ScoredWorker(w("p2", 1), 0));
        assertEquals("p2", PICKER.pick(request, p2Busier).id());
        assertEquals(
                "p1",
                new CacheAwarePicker(new CacheAware(0.3, 0, 1, 1))
                        .pick(request, p2Busier)
                        .id());
    }
}
