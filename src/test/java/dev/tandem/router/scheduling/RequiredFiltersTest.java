package dev.tandem.router.scheduling;

import static dev.tandem.router.scheduling.Workers.view;
import static dev.tandem.router.scheduling.Workers.w;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.config.SchedulerSettings;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerView;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every profile leaves out the workers that failed the request and those of another model fingerprint,
 * even when its configuration names no filter at all.
 */
class RequiredFiltersTest {
    private static final SchedulingProfile UNFILTERED = SchedulingPlugins.profile(
            "prefill",
            SchedulerSettings.of(List.of(), List.of(new SchedulerSettings.WeightedPlugin("least-loaded", 1))));

    static Stream<Arguments> cases() {
        List<WorkerView> pool = List.of(w("p1", 0), w("p2", 3), view("p3", 0, WorkerLoad.IDLE, false, 9));
        return Stream.of(
                Arguments.of("any model, nothing failed: the least loaded", pool, Set.of(), null, "p1"),
                Arguments.of("p1 failed the request", pool, Set.of("p1"), null, "p3"),
                Arguments.of("p1 failed, model 7 only", pool, Set.of("p1"), Set.of(7L), "p2"),
                Arguments.of("model 9 only", pool, Set.of(), Set.of(9L), "p3"),
                Arguments.of("every worker of model 7 failed", pool, Set.of("p1", "p2"), Set.of(7L), null),
                Arguments.of("a model nobody serves", pool, Set.of(), Set.of(5L), null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void failedWorkersAndOtherModelsAreLeftOut(
            String name, List<WorkerView> workers, Set<String> avoid, Set<Long> fingerprints, String expected) {
        assertEquals(
                expected,
                UNFILTERED
                        .choose(new SchedulingRequest(null, null, 10, 0, avoid, fingerprints), workers)
                        .map(WorkerView::id)
                        .orElse(null));
    }
}
