package dev.tandem.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The budget adds up: its shares never exceed it, and each role gets what the documented split says. */
class MemoryBudgetTest {
    private static final long GIB = 1L << 30;
    private static final long MIB = 1L << 20;
    private static final MemorySettings DEFAULTS = new MemorySettings(MemorySettings.DEFAULT_HEAP_FRACTION, 0, false);
    /** A block counting 8 KiB that takes 8 KiB + 256 bytes of heap (the built-in model's, roughly). */
    private static final MemoryBudget.BlockCost BLOCK = new MemoryBudget.BlockCost(8192, 8192 + 256);

    private static MemoryBudget.Shape shape(boolean router, int prefill, int decode) {
        return new MemoryBudget.Shape(router, prefill, decode, true, MIB, 512 * 1024, true);
    }

    static Stream<Arguments> shapes() {
        long total = (long) (MemorySettings.DEFAULT_HEAP_FRACTION * (6 * GIB - MIB));
        long router = total * 5 / 100;
        long workers = total - router - 2 * 512 * 1024;
        long unit = workers / 10;
        return Stream.of(
                // name, settings, heap, shape, total, decode each, prefill each, prefix index, tokenizers
                Arguments.of(
                        "tandem all: router 5%, in flight, then decode 4 : prefill 1",
                        DEFAULTS,
                        6 * GIB,
                        shape(true, 2, 2),
                        total,
                        4 * unit,
                        unit,
                        router * 60 / 100,
                        router - router * 60 / 100 - router * 20 / 100),
                Arguments.of(
                        "a router alone takes it all",
                        DEFAULTS,
                        6 * GIB,
                        shape(true, 0, 0),
                        total,
                        0L,
                        0L,
                        total * 60 / 100,
                        total - total * 60 / 100 - total * 20 / 100),
                Arguments.of(
                        "a decode node gives its workers everything",
                        DEFAULTS,
                        6 * GIB,
                        shape(false, 0, 3),
                        total,
                        total / 12 * 4,
                        0L,
                        0L,
                        0L),
                Arguments.of(
                        "prefill workers without a prefix cache take only what is in flight",
                        DEFAULTS,
                        6 * GIB,
                        new MemoryBudget.Shape(true, 2, 2, true, MIB, 512 * 1024, false),
                        total,
                        (total - router - 2 * 512 * 1024) / 8 * 4,
                        0L,
                        router * 60 / 100,
                        router - router * 60 / 100 - router * 20 / 100),
                Arguments.of(
                        "workers fronting a GPU server hold no KV here: the router takes the budget",
                        DEFAULTS,
                        6 * GIB,
                        new MemoryBudget.Shape(true, 1, 1, false, MIB, 512 * 1024, true),
                        total,
                        0L,
                        0L,
                        total * 60 / 100,
                        total - total * 60 / 100 - total * 20 / 100),
                Arguments.of(
                        "budget-bytes instead of the heap",
                        new MemorySettings(0.4, 100 * MIB, false),
                        6 * GIB,
                        shape(false, 0, 1),
                        100 * MIB,
                        100 * MIB / 4 * 4,
                        0L,
                        0L,
                        0L),
                Arguments.of(
                        "weights larger than the heap leave nothing",
                        DEFAULTS,
                        MIB / 2,
                        shape(true, 1, 1),
                        0L,
                        0L,
                        0L,
                        0L,
                        0L));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shapes")
    void sharesFollowTheSplitAndAddUp(
            String name,
            MemorySettings settings,
            long heap,
            MemoryBudget.Shape shape,
            long total,
            long decodeEach,
            long prefillEach,
            long prefixIndex,
            long tokenizers) {
        MemoryBudget b = MemoryBudget.plan(settings, heap, shape);
        assertEquals(total, b.totalBytes(), "total");
        assertEquals(decodeEach, b.decodeWorkerBytes(), "each decode worker");
        assertEquals(prefillEach, b.prefillWorkerBytes(), "each prefill worker");
        assertEquals(prefixIndex, b.prefixIndexBytes(), "prefix index");
        assertEquals(tokenizers, b.tokenizerBytes(), "tokenizers");
        int prefill = shape.kvOnHeap() ? shape.prefillWorkers() : 0;
        int decode = shape.kvOnHeap() ? shape.decodeWorkers() : 0;
        long sum = decode * b.decodeWorkerBytes()
                + prefill * (b.prefillWorkerBytes() + b.prefillInFlightBytes())
                + b.prefixIndexBytes()
                + b.routedTreeBytes()
                + b.tokenizerBytes();
        assertTrue(sum <= b.totalBytes(), sum + " > " + b.totalBytes());
        assertTrue(sum >= b.totalBytes() - 16, "nothing is left unassigned: " + sum + " of " + b.totalBytes());
    }

    static Stream<Arguments> capacities() {
        // One decode worker and one prefill worker under a 10 MiB budget-bytes, no router, nothing in flight.
        long unit = 10 * MIB / 5;
        long decodeShare = 4 * unit / BLOCK.heapBytes() * BLOCK.countedBytes();
        long prefillShare = unit / BLOCK.heapBytes() * BLOCK.countedBytes();
        return Stream.of(
                Arguments.of(
                        "auto is the share", WorkerSettings.AUTO, WorkerSettings.AUTO, decodeShare, prefillShare, 0),
                Arguments.of(
                        "above the share is lowered, with a warning each", 4 * GIB, GIB, decodeShare, prefillShare, 2),
                Arguments.of("below the share is kept", MIB, 0L, MIB, 0L, 0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("capacities")
    void configuredCapacitiesMeetTheirShares(
            String name, long kv, long prefix, long expectedKv, long expectedPrefix, int warnings) {
        MemoryBudget b = MemoryBudget.plan(
                new MemorySettings(0.4, 10 * MIB, false),
                6 * GIB,
                new MemoryBudget.Shape(false, 1, 1, true, 0, 0, true));
        List<String> warned = new ArrayList<>();
        WorkerSettings w = b.workerSettings(
                TandemConfig.defaults().worker().withKvCapacityBytes(kv).withPrefixCacheBytes(prefix),
                BLOCK,
                warned::add);
        assertEquals(expectedKv, w.kvCapacityBytes());
        assertEquals(expectedPrefix, w.prefixCacheBytes());
        assertEquals(warnings, warned.size(), warned.toString());
        if (warnings > 0) {
            assertTrue(warned.get(0).contains("worker.kv-capacity-bytes 4294967296"), warned.get(0));
            assertTrue(warned.get(0).contains(Long.toString(expectedKv)), warned.get(0));
        }
    }

    @Test
    void aGpuServersWorkerKeepsANominalCapacityAndNoPrefixCache() {
        MemoryBudget b = MemoryBudget.plan(DEFAULTS, 6 * GIB, new MemoryBudget.Shape(true, 1, 1, false, 0, 0, true));
        WorkerSettings w = b.workerSettings(TandemConfig.defaults().worker(), BLOCK, m -> {
            throw new AssertionError(m);
        });
        assertEquals(MemoryBudget.UPSTREAM_NOMINAL_KV_BYTES, w.kvCapacityBytes());
        assertEquals(0, w.prefixCacheBytes());
    }

    @Test
    void theBannerNamesTheBudgetAndEachShare() {
        List<String> lines =
                MemoryBudget.plan(DEFAULTS, 6 * GIB, shape(true, 2, 2)).describe();
        assertTrue(
                lines.get(0).startsWith("memory budget 1.80 GiB = 0.3 × (6.00 GiB max heap − 1.0 MiB model)"),
                lines.get(0));
        assertTrue(lines.stream().anyMatch(l -> l.contains("decode workers: 2 ×")), lines.toString());
        assertTrue(lines.stream().anyMatch(l -> l.contains("prefill workers: 2 ×")), lines.toString());
        assertTrue(lines.stream().anyMatch(l -> l.contains("router: prefix index")), lines.toString());
    }
}
