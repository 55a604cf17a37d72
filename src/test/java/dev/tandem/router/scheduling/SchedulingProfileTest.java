package dev.tandem.router.scheduling;

import static dev.tandem.router.scheduling.Workers.draining;
import static dev.tandem.router.scheduling.Workers.w;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.ConfigException;
import dev.tandem.config.SchedulerSettings;
import dev.tandem.protocol.WorkerView;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The seed's policies as plugins, table-driven over fixture workers. */
class SchedulingProfileTest {
    private static final SchedulingProfile PREFILL = SchedulingPlugins.profile(
            "prefill",
            SchedulerSettings.of(
                    List.of("not-draining"), List.of(new SchedulerSettings.WeightedPlugin("least-loaded", 1))));
    private static final SchedulingProfile DECODE = SchedulingPlugins.profile(
            "decode",
            SchedulerSettings.of(
                    List.of("not-draining"), List.of(new SchedulerSettings.WeightedPlugin("session-affinity", 1))));

    static Stream<Arguments> prefillCases() {
        return Stream.of(
                Arguments.of("least loaded wins", List.of(w("p1", 3), w("p2", 1), w("p3", 2)), 0L, "p2"),
                Arguments.of(
                        "least loaded wins whatever the tick", List.of(w("p1", 3), w("p2", 1), w("p3", 2)), 5L, "p2"),
                Arguments.of("ties rotate with the tick (0)", List.of(w("p1", 1), w("p2", 1), w("p3", 4)), 0L, "p1"),
                Arguments.of("ties rotate with the tick (1)", List.of(w("p1", 1), w("p2", 1), w("p3", 4)), 1L, "p2"),
                Arguments.of("ties rotate with the tick (2)", List.of(w("p1", 1), w("p2", 1), w("p3", 4)), 2L, "p1"),
                Arguments.of(
                        "a draining worker is skipped even if idle", List.of(draining("p1", 0), w("p2", 5)), 0L, "p2"),
                Arguments.of("a single worker is chosen", List.of(w("p9", 100)), 3L, "p9"),
                Arguments.of("nobody left", List.of(draining("p1", 0)), 0L, null),
                Arguments.of("empty pool", List.of(), 0L, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("prefillCases")
    void leastLoadedPrefill(String name, List<WorkerView> workers, long tick, String expected) {
        Optional<WorkerView> choice = PREFILL.choose(new SchedulingRequest(null, null, 10, tick), workers);
        assertEquals(Optional.ofNullable(expected), choice.map(WorkerView::id));
    }

    static Stream<Arguments> decodeCases() {
        List<WorkerView> pool = List.of(w("d1", 0), w("d2", 7), w("d3", 2));
        return Stream.of(
                Arguments.of("affinity wins over load", pool, "s", "d2", 0L, "d2"),
                Arguments.of("affinity wins whatever the tick", pool, "s", "d2", 4L, "d2"),
                Arguments.of("no session: round robin (0)", pool, null, null, 0L, "d1"),
                Arguments.of("no session: round robin (1)", pool, null, null, 1L, "d2"),
                Arguments.of("no session: round robin (2)", pool, null, null, 2L, "d3"),
                Arguments.of("no session: round robin wraps", pool, null, null, 3L, "d1"),
                Arguments.of("affinity to a vanished worker falls back", pool, "s", "d9", 1L, "d2"),
                Arguments.of(
                        "affinity to a draining worker falls back",
                        List.of(w("d1", 0), draining("d2", 0)),
                        "s",
                        "d2",
                        0L,
                        "d1"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("decodeCases")
    void sessionAffinityDecode(
            String name, List<WorkerView> workers, String session, String affinity, long tick, String expected) {
        assertEquals(
                expected,
                DECODE.choose(new SchedulingRequest(session, affinity, 10, tick), workers)
                        .map(WorkerView::id)
                        .orElse(null));
    }

    @Test
    void roundRobinVisitsEveryWorkerEqually() {
        List<WorkerView> pool = List.of(w("d3", 0), w("d1", 0), w("d2", 0));
        List<String> picks = new ArrayList<>();
        for (long tick = 0; tick < 9; tick++) {
            picks.add(DECODE.choose(new SchedulingRequest(null, null, 1, tick), pool)
                    .orElseThrow()
                    .id());
        }
        assertEquals(List.of("d1", "d2", "d3", "d1", "d2", "d3", "d1", "d2", "d3"), picks);
    }

    @Test
    void weightsCombineScorers() {
        SchedulingProfile both = SchedulingPlugins.profile(
                "decode",
                SchedulerSettings.of(
                        List.of(),
                        List.of(
                                new SchedulerSettings.WeightedPlugin("session-affinity", 1),
                                new SchedulerSettings.WeightedPlugin("least-loaded", 2))));
        // Load outweighs affinity 2:1, so the idle worker beats the session's busy one.
        List<WorkerView> pool = List.of(w("d1", 0), w("d2", 10));
        assertEquals(
                "d1",
                both.choose(new SchedulingRequest("s", "d2", 1, 0), pool)
                        .orElseThrow()
                        .id());
    }

    @Test
    void unknownPluginIsAConfigurationError() {
        ConfigException e = Assertions.assertThrows(
                ConfigException.class,
                () -> SchedulingPlugins.profile(
                        "decode",
                        SchedulerSettings.of(
                                List.of(), List.of(new SchedulerSettings.WeightedPlugin("least-laoded", 1)))));
        assertTrue(e.getMessage().contains("least-laoded"));
        ConfigException filter = Assertions.assertThrows(
                ConfigException.class,
                () -> SchedulingPlugins.profile("prefill", SchedulerSettings.of(List.of("load-treshold"), List.of())));
        assertTrue(
                filter.getMessage().contains("load-treshold")
                        && filter.getMessage().contains("load-threshold"),
                filter.getMessage());
    }
}
