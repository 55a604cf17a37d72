package dev.tandem.router.scheduling;

import static dev.tandem.router.scheduling.Workers.counted;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.config.SchedulerSettings.LoadThreshold;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerView;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code load-threshold} leaves out workers over any of its thresholds, reading queued prefill tokens and
 * active sequences as the larger of the worker's report and the routers' fresh counts, and keeps everyone
 * when everyone is over. Each row: thresholds, workers, the ids kept.
 */
class LoadThresholdFilterTest {
    private static final LoadThreshold DEFAULTS = LoadThreshold.DEFAULTS;
    private static final LoadThreshold FOUR_SEQUENCES = new LoadThreshold(65_536, 4, 0.95);
    private static final LoadThreshold TIGHT_QUEUE = new LoadThreshold(1000, Long.MAX_VALUE, 1.0);

    private static WorkerLoad queued(int tokens) {
        return new WorkerLoad(tokens, 0, 0, 0);
    }

    private static WorkerLoad sequences(int n) {
        return new WorkerLoad(0, n, 0, 0);
    }

    private static WorkerLoad kv(long used, long capacity) {
        return new WorkerLoad(0, 1, used, capacity);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(
                        "defaults: a reported queue over 65536 tokens",
                        DEFAULTS,
                        List.of(counted("p1", 1, 0, queued(70_000)), counted("p2", 1, 0, queued(65_536))),
                        List.of("p2")),
                Arguments.of(
                        "defaults: routers' dispatches over 65536 beat a stale idle report",
                        DEFAULTS,
                        List.of(counted("p1", 5, 70_000, queued(0)), counted("p2", 0, 0, queued(0))),
                        List.of("p2")),
                Arguments.of(
                        "defaults: no limit on sequences",
                        DEFAULTS,
                        List.of(counted("d1", 5000, 0, sequences(5000)), counted("d2", 0, 0, sequences(0))),
                        List.of("d1", "d2")),
                Arguments.of(
                        "defaults: KV over 95% of capacity, at 95%, no capacity reported",
                        DEFAULTS,
                        List.of(
                                counted("d1", 1, 0, kv(960, 1000)),
                                counted("d2", 1, 0, kv(950, 1000)),
                                counted("d3", 1, 0, kv(10_000, 0))),
                        List.of("d2", "d3")),
                Arguments.of(
                        "sequences: reported over, routers' count over, both at the threshold",
                        FOUR_SEQUENCES,
                        List.of(
                                counted("d1", 1, 0, sequences(5)),
                                counted("d2", 5, 0, sequences(2)),
                                counted("d3", 4, 0, sequences(4))),
                        List.of("d3")),
                Arguments.of(
                        "sequences: a burst since the heartbeat beats the stale report",
                        FOUR_SEQUENCES,
                        List.of(counted("d1", 7, 0, sequences(0)), counted("d2", 2, 0, sequences(3))),
                        List.of("d2")),
                Arguments.of(
                        "queue: a stale report under, fresh dispatches over",
                        TIGHT_QUEUE,
                        List.of(counted("p1", 2, 1500, queued(200)), counted("p2", 1, 900, queued(100))),
                        List.of("p2")),
                Arguments.of(
                        "queue: the fresh count under, the report over (tokens queued by others)",
                        TIGHT_QUEUE,
                        List.of(counted("p1", 0, 0, queued(1200)), counted("p2", 0, 0, queued(999))),
                        List.of("p2")),
                Arguments.of(
                        "every worker over: the filter keeps them all",
                        TIGHT_QUEUE,
                        List.of(counted("p1", 1, 5000, queued(0)), counted("p2", 0, 0, queued(3000))),
                        List.of("p1", "p2")),
                Arguments.of("no workers", DEFAULTS, List.of(), List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void keepsTheWorkersUnderTheThresholds(
            String name, LoadThreshold threshold, List<WorkerView> workers, List<String> kept) {
        LoadThresholdFilter filter = new LoadThresholdFilter(threshold);
        SchedulingRequest request = new SchedulingRequest(null, null, 10, 0);
        assertEquals(
                kept,
                filter.filter(request, workers).stream().map(WorkerView::id).toList());
    }
}
