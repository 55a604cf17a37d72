package dev.tandem.router.scheduling;

import static dev.tandem.router.scheduling.Workers.counted;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerView;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The scorers cache-aware scheduling adds: {@code prefix-overlap} (the share of the prompt a worker
 * caches), and {@code queued-prefill-tokens} and {@code active-sequences}, which read the larger of a
 * worker's heartbeat report and the routers' fresh counts. Each row is one scorer over fixture workers,
 * and the score every worker gets.
 */
class CacheAwareScorersTest {
    private static final Scorer PREFIX = new PrefixOverlapScorer();
    private static final Scorer QUEUED = new QueuedPrefillTokensScorer();
    private static final Scorer ACTIVE = new ActiveSequencesScorer();

    private static SchedulingRequest prompt(int promptBlocks, Map<String, Integer> cached) {
        return new SchedulingRequest(null, null, promptBlocks * 16, 0, Set.of(), null, promptBlocks, cached);
    }

    private static final SchedulingRequest ANY = prompt(0, Map.of());

    private static WorkerLoad queued(int tokens) {
        return new WorkerLoad(tokens, 0, 0, 0);
    }

    private static WorkerLoad sequences(int n) {
        return new WorkerLoad(0, n, 0, 0);
    }

    /** id → expected score, in the workers' order. */
    private static Map<String, Double> scores(Object... idsAndScores) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (int i = 0; i < idsAndScores.length; i += 2) {
            out.put((String) idsAndScores[i], ((Number) idsAndScores[i + 1]).doubleValue());
        }
        return out;
    }

    static Stream<Arguments> cases() {
        List<WorkerView> three = List.of(
                counted("d1", 0, 0, WorkerLoad.IDLE),
                counted("d2", 0, 0, WorkerLoad.IDLE),
                counted("d3", 0, 0, WorkerLoad.IDLE));
        return Stream.of(
                Arguments.of(
                        "prefix: cached leading blocks / prompt blocks",
                        PREFIX,
                        prompt(4, Map.of("d1", 4, "d2", 1)),
                        three,
                        scores("d1", 1, "d2", 0.25, "d3", 0)),
                Arguments.of(
                        "prefix: a prompt without a full block scores 0 everywhere",
                        PREFIX,
                        prompt(0, Map.of("d1", 3)),
                        three,
                        scores("d1", 0, "d2", 0, "d3", 0)),
                Arguments.of(
                        "prefix: nothing known of caches scores 0 everywhere",
                        PREFIX,
                        new SchedulingRequest(null, null, 64, 0),
                        three,
                        scores("d1", 0, "d2", 0, "d3", 0)),
                Arguments.of(
                        "prefix: an index count beyond the prompt is capped at 1",
                        PREFIX,
                        prompt(2, Map.of("d2", 5)),
                        three,
                        scores("d1", 0, "d2", 1, "d3", 0)),
                Arguments.of(
                        "queued: reported only, the shorter queue wins",
                        QUEUED,
                        ANY,
                        List.of(counted("p1", 1, 0, queued(4000)), counted("p2", 1, 0, queued(20))),
                        scores("p1", 0, "p2", 1)),
                Arguments.of(
                        "queued: a burst dispatched since p2's heartbeat beats p1's stale report",
                        QUEUED,
                        ANY,
                        List.of(counted("p1", 1, 0, queued(4000)), counted("p2", 3, 8000, queued(0))),
                        scores("p1", 1, "p2", 0)),
                Arguments.of(
                        "queued: the larger of report and routers' count, linear between",
                        QUEUED,
                        ANY,
                        List.of(
                                counted("p1", 1, 1000, queued(3000)),
                                counted("p2", 1, 2000, queued(500)),
                                counted("p3", 1, 1000, queued(1000))),
                        scores("p1", 0, "p2", 0.5, "p3", 1)),
                Arguments.of(
                        "queued: all equal, no opinion",
                        QUEUED,
                        ANY,
                        List.of(counted("p1", 0, 0, queued(0)), counted("p2", 0, 0, queued(0))),
                        scores("p1", 1, "p2", 1)),
                Arguments.of(
                        "active: reported only, fewer sequences win",
                        ACTIVE,
                        ANY,
                        List.of(counted("d1", 0, 0, sequences(6)), counted("d2", 0, 0, sequences(2))),
                        scores("d1", 0, "d2", 1)),
                Arguments.of(
                        "active: requests dispatched since d2's heartbeat beat d1's stale report",
                        ACTIVE,
                        ANY,
                        List.of(counted("d1", 3, 0, sequences(3)), counted("d2", 9, 0, sequences(0))),
                        scores("d1", 1, "d2", 0)),
                Arguments.of(
                        "active: a report above the routers' count (sequences still waiting) counts",
                        ACTIVE,
                        ANY,
                        List.of(
                                counted("d1", 2, 0, sequences(8)),
                                counted("d2", 4, 0, sequences(0)),
                                counted("d3", 0, 0, sequences(0))),
                        scores("d1", 0, "d2", 0.5, "d3", 1)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void scores(
            String name, Scorer scorer, SchedulingRequest request, List<WorkerView> workers, Map<String, Double> want) {
        Map<String, Double> got = new LinkedHashMap<>();
        for (WorkerView w : workers) {
            got.put(w.id(), scorer.score(request, w, workers));
        }
        assertEquals(want, got);
    }
}
