package dev.tandem.engine.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The timing model's arithmetic, checked against figures worked out by hand. */
class SimProfileTest {
    private static final SimProfile H100 = SimProfiles.named("llama3-8b-h100");

    /**
     * Prefill of (cached, total) on the 8B/H100 profile: (2·8.03e9·(n−c) + 2·32·4096·(n²−c²)) / (989e12·0.5).
     * E.g. 12,000 from scratch: (1.9272e14 + 3.7749e13) / 4.945e14 = 0.46606 s.
     */
    @ParameterizedTest
    @CsvSource({
        "0, 1, 0.0000325",
        "0, 1000, 0.0330",
        "0, 12000, 0.46606",
        "11488, 12000, 0.023003",
        "12000, 12000, 0",
    })
    void prefillCostsTheMatmulsPerNewTokenPlusAttentionOverTheContext(int cached, int total, double seconds) {
        assertEquals(seconds, H100.prefillNanos(cached, total) / 1e9, Math.max(1e-7, seconds * 0.002));
    }

    @ParameterizedTest
    @CsvSource({"2048, 4096", "4096, 8192", "8192, 16384", "30000, 60000"})
    void aCachedPrefixMakesTheRestCheaperThanComputingItAll(int cached, int total) {
        assertTrue(H100.prefillNanos(cached, total) < H100.prefillNanos(0, total));
        // Attention grows with the context: the same new tokens cost more further in.
        assertTrue(H100.prefillNanos(cached, total) >= H100.prefillNanos(0, total - cached));
    }

    /**
     * Decode step: 1 ms + (16.06e9 + T·131072) / (3.35e12·0.8). One sequence of 1,000 tokens:
     * 1 ms + 16.191e9 / 2.68e12 s = 7.0415 ms; 16 of 12,000: 1 ms + (16.06e9 + 2.5166e10) / 2.68e12 = 16.383 ms.
     */
    @ParameterizedTest
    @CsvSource({"1, 1000, 7.0415", "16, 192000, 16.383", "0, 0, 0"})
    void aDecodeStepReadsTheWeightsOnceAndEverySequencesKv(int batch, long context, double millis) {
        assertEquals(millis, H100.decodeStepNanos(batch, context) / 1e6, Math.max(1e-6, millis * 0.001));
    }

    /** 2 MiB (16 tokens of 128 KiB) at 50 GB/s: 41.94 µs. */
    @ParameterizedTest
    @CsvSource({"2097152, 41943", "0, 0", "1572864000, 31457280"})
    void aTransferTakesTheBytesOverTheInterconnect(long bytes, long nanos) {
        assertEquals(nanos, H100.transferNanos(bytes), 1);
    }

    @ParameterizedTest
    @CsvSource({"llama3-8b-h100, 131072", "llama3-8b-a100, 131072", "llama3-70b-h100x8, 327680", "zero, 131072"})
    void profilesCountTheirModelsKvPerToken(String name, long kvBytesPerToken) {
        SimProfile p = SimProfiles.named(name);
        assertEquals(kvBytesPerToken, p.kvBytesPerToken());
        assertTrue(p.kvMemoryBytes() > 0, "room for KV after the weights");
    }

    @ParameterizedTest
    @CsvSource({"0, 12000", "5, 1"})
    void theZeroProfileCostsNothing(int cached, int total) {
        SimProfile zero = SimProfiles.named("zero");
        assertEquals(0, zero.prefillNanos(cached, total));
        assertEquals(0, zero.decodeStepNanos(64, 100_000));
        assertEquals(0, zero.transferNanos(1L << 30));
    }

    @org.junit.jupiter.api.Test
    void anUnknownProfileNamesTheKnownOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SimProfiles.named("tpu"));
        assertTrue(e.getMessage().contains("llama3-8b-h100"), e.getMessage());
    }
}
