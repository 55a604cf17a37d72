package dev.tandem.router.flow;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** When a model's pools have no room, table-driven over one prefill worker's and one decode worker's state. */
class SaturationTest {
    /** 1,000 tokens or 25 ms (at its measured rate); decode: its batch of 4, or 90% of its KV. */
    private final Saturation saturation = new Saturation(1_000, 25, 0.9);

    private static WorkerView prefill(String id, long inFlightTokens, int inFlight, double rate, boolean draining) {
        WorkerLoad load = WorkerLoad.prefill(0, 0).withPrefillRate(rate);
        return new WorkerView(
                new WorkerDescriptor(id, WorkerRole.PREFILL, "m", 7, "n", 1, draining, load), inFlight, inFlightTokens);
    }

    private static WorkerView decode(String id, int inFlight, long kvUsed, long kvCapacity) {
        WorkerLoad load = WorkerLoad.decode(0, kvUsed, kvCapacity, 0);
        return new WorkerView(new WorkerDescriptor(id, WorkerRole.DECODE, "m", 7, "n", 4, false, load), inFlight, 0);
    }

    static Stream<Arguments> states() {
        WorkerView idleDecode = decode("d", 0, 0, 100);
        return Stream.of(
                Arguments.of("idle", prefill("p", 0, 0, 10_000, false), idleDecode, false),
                Arguments.of("prefill under 25 ms at its rate", prefill("p", 200, 1, 10_000, false), idleDecode, false),
                Arguments.of("prefill at 25 ms at its rate", prefill("p", 250, 1, 10_000, false), idleDecode, true),
                Arguments.of(
                        "prefill over the token bound, fast", prefill("p", 1_000, 1, 1e9, false), idleDecode, true),
                Arguments.of("no rate yet: one prompt at a time", prefill("p", 10, 1, 0, false), idleDecode, true),
                Arguments.of("no rate yet, nothing in flight", prefill("p", 0, 0, 0, false), idleDecode, false),
                Arguments.of("a draining worker does not count", prefill("p", 0, 0, 10_000, true), idleDecode, false),
                Arguments.of("decode batch full", prefill("p", 0, 0, 10_000, false), decode("d", 4, 0, 100), true),
                Arguments.of("decode KV at 90%", prefill("p", 0, 0, 10_000, false), decode("d", 1, 90, 100), true),
                Arguments.of("decode KV under 90%", prefill("p", 0, 0, 10_000, false), decode("d", 1, 89, 100), false),
                Arguments.of(
                        "no KV capacity reported", prefill("p", 0, 0, 10_000, false), decode("d", 1, 5, 0), false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("states")
    void saturatedWhenAPoolHasNoWorkerWithRoom(String name, WorkerView prefill, WorkerView decode, boolean saturated) {
        assertEquals(saturated, saturation.saturated(List.of(prefill), List.of(decode)));
    }

    @Test
    void oneWorkerWithRoomIsEnoughAndTheFullOnesAreNamed() {
        WorkerView busy = prefill("p1", 5_000, 3, 10_000, false);
        WorkerView free = prefill("p2", 0, 0, 10_000, false);
        WorkerView fullDecode = decode("d1", 4, 0, 100);
        WorkerView openDecode = decode("d2", 0, 0, 100);
        assertEquals(false, saturation.saturated(List.of(busy, free), List.of(fullDecode, openDecode)));
        assertEquals(Set.of("p1", "d1"), saturation.full(List.of(busy, free), List.of(fullDecode, openDecode)));
        assertEquals(true, saturation.saturated(List.of(busy), List.of(openDecode)));
        assertEquals(false, saturation.saturated(List.of(), List.of()), "no workers: scheduling answers 503");
    }
}
