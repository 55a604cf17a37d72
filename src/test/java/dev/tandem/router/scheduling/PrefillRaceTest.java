package dev.tandem.router.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Local prefill against the prefill worker the pool chose, in predicted seconds. Each row: a prompt, a
 * decode worker (its local queue, rate, what it holds), a prefill worker (queue, rate, transfer rate), the
 * two predictions and who goes first.
 */
class PrefillRaceTest {
    /** 1 KiB per token: 16-token blocks of 16 KiB. */
    private static final long BLOCK_BYTES = 16 << 10;

    private static WorkerView decode(int localQueued, double rate) {
        return new WorkerView(
                new WorkerDescriptor(
                        "d1",
                        WorkerRole.DECODE,
                        "m",
                        7,
                        "node-1",
                        64,
                        false,
                        WorkerLoad.decode(10, 0, 1 << 30, 5)
                                .withLocalPrefill(localQueued, localQueued > 0 ? 1 : 0)
                                .withPrefillRate(rate),
                        new CacheSpec(16, true, BLOCK_BYTES)),
                0,
                0);
    }

    private static WorkerView prefill(int queued, double rate, double kvBytesPerSecond) {
        return new WorkerView(
                new WorkerDescriptor(
                        "p1",
                        WorkerRole.PREFILL,
                        "m",
                        7,
                        "node-1",
                        1,
                        false,
                        WorkerLoad.prefill(queued, queued > 0 ? 1 : 0)
                                .withPrefillRate(rate)
                                .withKvTransferRate(kvBytesPerSecond),
                        new CacheSpec(16, false, BLOCK_BYTES)),
                0,
                0);
    }

    static Stream<Arguments> cases() {
        // A 4,000-token prompt; the decode worker holds 3,200 of it (200 blocks), the prefill worker nothing.
        SchedulingRequest prompt = PredictedTtftScorerTest.prompt(4000, Map.of("d1", 200));
        return Stream.of(
                Arguments.of(
                        "idle on both sides: 800 tokens here against 4,000 there",
                        prompt,
                        decode(0, 10_000),
                        prefill(0, 10_000, 0),
                        0.08,
                        0.4,
                        true),
                Arguments.of(
                        "the decode worker is busy prefilling others: the prefill worker is sooner",
                        prompt,
                        decode(8_000, 10_000),
                        prefill(0, 10_000, 0),
                        0.88,
                        0.4,
                        false),
                Arguments.of(
                        "a queued prefill pool: local",
                        prompt,
                        decode(8_000, 10_000),
                        prefill(20_000, 10_000, 0),
                        0.88,
                        2.4,
                        true),
                Arguments.of(
                        "the transfer of the 800 tokens' KV it lacks tips it (800 KiB at 1 MiB/s)",
                        prompt,
                        decode(4_000, 10_000),
                        prefill(0, 10_000, 1 << 20),
                        0.48,
                        0.4 + 800.0 / 1024,
                        true),
                Arguments.of(
                        "a decode worker with no rate yet is taken at the prefill pool's median",
                        prompt,
                        decode(1_000, 0),
                        prefill(0, 5_000, 0),
                        1800 / 5_000.0,
                        0.8,
                        true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void localGoesFirstWhenPredictedNoSlower(
            String name,
            SchedulingRequest request,
            WorkerView decode,
            WorkerView prefill,
            double localSeconds,
            double splitSeconds,
            boolean local) {
        List<WorkerView> pool = List.of(prefill);
        double median = PrefillTime.medianRate(pool);
        assertEquals(localSeconds, PrefillRace.localSeconds(request, decode, median), 1e-9);
        assertEquals(splitSeconds, PrefillRace.splitSeconds(request, decode, prefill, median), 1e-9);
        assertEquals(local, PrefillRace.localFirst(request, decode, prefill, pool));
    }
}
