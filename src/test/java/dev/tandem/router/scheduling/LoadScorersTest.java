package dev.tandem.router.scheduling;

import static dev.tandem.router.scheduling.Workers.reporting;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.config.SchedulerSettings;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerView;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The load workers report reaches scheduling: queued prefill tokens and KV use change choices that the
 * routers' own in-flight counts alone would make otherwise. Table-driven over fixture workers.
 */
class LoadScorersTest {

    private static SchedulingProfile profile(Object... pluginsAndWeights) {
        List<SchedulerSettings.WeightedPlugin> scorers = new java.util.ArrayList<>();
        for (int i = 0; i < pluginsAndWeights.length; i += 2) {
            scorers.add(new SchedulerSettings.WeightedPlugin(
                    (String) pluginsAndWeights[i], ((Number) pluginsAndWeights[i + 1]).doubleValue()));
        }
        return SchedulingPlugins.profile("test", SchedulerSettings.of(List.of("not-draining"), scorers));
    }

    private static WorkerLoad queued(int tokens) {
        return new WorkerLoad(tokens, 0, 0, 0);
    }

    private static WorkerLoad kv(long used, long capacity) {
        return new WorkerLoad(0, 1, used, capacity);
    }

    static Stream<Arguments> cases() {
        // p1 and p2 have one request each in flight (least-loaded ties); p1's is a long prompt.
        List<WorkerView> longPromptOnP1 = List.of(reporting("p1", 1, queued(4000)), reporting("p2", 1, queued(20)));
        // p1 has fewer requests but the longer queue of tokens.
        List<WorkerView> fewButLong = List.of(reporting("p1", 1, queued(6000)), reporting("p2", 2, queued(300)));
        List<WorkerView> decodeKv = List.of(reporting("d1", 0, kv(900, 1000)), reporting("d2", 0, kv(100, 1000)));
        return Stream.of(
                Arguments.of(
                        "least-loaded alone: a tie, round robin gives p1",
                        profile("least-loaded", 1),
                        longPromptOnP1,
                        null,
                        "p1"),
                Arguments.of(
                        "queued-prefill-tokens breaks the tie toward the short queue",
                        profile("least-loaded", 1, "queued-prefill-tokens", 1),
                        longPromptOnP1,
                        null,
                        "p2"),
                Arguments.of(
                        "queued-prefill-tokens alone", profile("queued-prefill-tokens", 1), longPromptOnP1, null, "p2"),
                Arguments.of(
                        "least-loaded alone: fewer requests win", profile("least-loaded", 1), fewButLong, null, "p1"),
                Arguments.of(
                        "queued tokens outweigh request counts 2:1",
                        profile("least-loaded", 1, "queued-prefill-tokens", 2),
                        fewButLong,
                        null,
                        "p2"),
                Arguments.of(
                        "request counts outweigh queued tokens 2:1",
                        profile("least-loaded", 2, "queued-prefill-tokens", 1),
                        fewButLong,
                        null,
                        "p1"),
                Arguments.of(
                        "no reported load: queued-prefill-tokens has no opinion",
                        profile("queued-prefill-tokens", 1),
                        List.of(reporting("p1", 0, queued(0)), reporting("p2", 0, queued(0))),
                        null,
                        "p1"),
                Arguments.of(
                        "no session: round robin ignores KV use", profile("session-affinity", 1), decodeKv, null, "d1"),
                Arguments.of(
                        "kv-utilization prefers free KV memory",
                        profile("session-affinity", 1, "kv-utilization", 1),
                        decodeKv,
                        null,
                        "d2"),
                Arguments.of(
                        "affinity outweighs KV use at 2:1",
                        profile("session-affinity", 2, "kv-utilization", 1),
                        decodeKv,
                        "d1",
                        "d1"),
                Arguments.of(
                        "KV use outweighs affinity at 1:2",
                        profile("session-affinity", 1, "kv-utilization", 2),
                        decodeKv,
                        "d1",
                        "d2"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void reportedLoadChangesTheChoice(
            String name, SchedulingProfile profile, List<WorkerView> workers, String affinityWorker, String expected) {
        // Tick 0: where scores tie, round robin starts at the first id.
        SchedulingRequest request = new SchedulingRequest(affinityWorker == null ? null : "s", affinityWorker, 10, 0);
        assertEquals(expected, profile.choose(request, workers).orElseThrow().id());
    }
}
