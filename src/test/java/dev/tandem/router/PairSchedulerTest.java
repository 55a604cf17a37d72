package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pairs form only within one model fingerprint: a decode worker no prefill worker can feed (another
 * engine's KV layout, say an external worker of a different kind) is never chosen.
 */
class PairSchedulerTest {

    /** "p1:7" is prefill worker p1 with fingerprint 7, "p1:7!" the same draining; "d1:7" a decode worker. */
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("one pair", List.of("p1:7"), List.of("d1:7"), Set.of(), "p1+d1"),
                Arguments.of(
                        "the decode worker of the other fingerprint has no feeder",
                        List.of("p1:7"),
                        List.of("d1:9", "d2:7"),
                        Set.of(),
                        "p1+d2"),
                Arguments.of(
                        "prefill matches the chosen decode worker",
                        List.of("p1:9", "p2:7"),
                        List.of("d1:7"),
                        Set.of(),
                        "p2+d1"),
                Arguments.of("no feeder at all", List.of("p1:9"), List.of("d1:7"), Set.of(), "missing prefill"),
                Arguments.of(
                        "the feeder failed this request",
                        List.of("p1:7", "p2:9"),
                        List.of("d1:7", "d2:9"),
                        Set.of("p1"),
                        "p2+d2"),
                Arguments.of("no decode workers", List.of("p1:7"), List.of(), Set.of(), "missing decode"),
                Arguments.of("no workers", List.of(), List.of(), Set.of(), "missing decode"),
                Arguments.of("no prefill workers", List.of(), List.of("d1:7"), Set.of(), "missing prefill"),
                Arguments.of(
                        "the only decode worker failed",
                        List.of("p1:7"),
                        List.of("d1:7"),
                        Set.of("d1"),
                        "missing decode"),
                Arguments.of(
                        "the feeders of one fingerprint all drain",
                        List.of("p1:7!", "p2:9"),
                        List.of("d1:7", "d2:9"),
                        Set.of(),
                        "p2+d2"),
                Arguments.of("every feeder drains", List.of("p1:7!"), List.of("d1:7"), Set.of(), "missing prefill"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void choosesWithinOneFingerprint(
            String name, List<String> prefill, List<String> decode, Set<String> avoid, String expected) {
        List<WorkerView> p = workers(WorkerRole.PREFILL, prefill);
        List<WorkerView> d = workers(WorkerRole.DECODE, decode);
        PairScheduler scheduler = CoreHarness.defaultScheduler(role -> role == WorkerRole.PREFILL ? p : d);
        PairScheduler.Choice c = scheduler.choose(null, null, new int[10], avoid);
        assertEquals(
                expected,
                c.missingRole() != null ? "missing " + c.missingRole() : c.prefillWorker() + "+" + c.decodeWorker());
    }

    private static List<WorkerView> workers(WorkerRole role, List<String> specs) {
        List<WorkerView> out = new ArrayList<>();
        for (String spec : specs) {
            String[] parts = spec.replace("!", "").split(":");
            out.add(new WorkerView(
                    new WorkerDescriptor(
                            parts[0],
                            role,
                            "m",
                            Long.parseLong(parts[1]),
                            "node",
                            4,
                            spec.endsWith("!"),
                            WorkerLoad.IDLE),
                    0));
        }
        return out;
    }
}
