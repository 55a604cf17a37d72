package dev.tandem.router.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every scorer rates a whole candidate list ({@link Scorer#scores}, what a profile calls) exactly as it
 * rates each candidate alone ({@link Scorer#score}): the linear form is only faster, on lists of any size
 * and with ties everywhere.
 */
class ScorerBatchTest {

    static Stream<Arguments> cases() {
        List<Supplier<Scorer>> scorers = List.of(
                LeastLoadedScorer::new,
                QueuedPrefillTokensScorer::new,
                ActiveSequencesScorer::new,
                KvUtilizationScorer::new,
                SessionAffinityScorer::new,
                PrefixOverlapScorer::new,
                PrefillCostScorer::new,
                KvBlockCostScorer::new);
        List<Arguments> out = new ArrayList<>();
        for (Supplier<Scorer> s : scorers) {
            for (int n : new int[] {1, 2, 7, 64}) {
                for (boolean ties : new boolean[] {false, true}) {
                    out.add(Arguments.of(s.get(), n, ties));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} over {1} workers, ties {2}")
    @MethodSource("cases")
    void scoringTheListEqualsScoringEachCandidate(Scorer scorer, int n, boolean ties) {
        Random random = new Random(31L * n + (ties ? 1 : 0));
        List<WorkerView> workers = new ArrayList<>();
        Map<String, Integer> cached = new HashMap<>();
        for (int i = 0; i < n; i++) {
            int bound = ties ? 2 : 1000;
            WorkerLoad load = new WorkerLoad(
                    random.nextInt(bound) * 16, random.nextInt(bound), random.nextInt(bound) * 1024L, 1L << 30);
            String id = "w" + i;
            workers.add(new WorkerView(
                    new WorkerDescriptor(
                            id, WorkerRole.DECODE, "m", 7, "n", 8, false, load, new CacheSpec(16, true, 2048)),
                    random.nextInt(bound),
                    random.nextInt(bound) * 16L));
            cached.put(id, random.nextInt(ties ? 2 : 64));
        }
        SchedulingRequest request = new SchedulingRequest("s", "w0", 1024, 3, Set.of(), null, 64, cached);
        double[] batch = scorer.scores(request, workers);
        for (int i = 0; i < n; i++) {
            assertEquals(scorer.score(request, workers.get(i), workers), batch[i], 0.0, scorer.name() + " w" + i);
        }
    }
}
