package dev.tandem.bench.trace;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The ideal shared cache on hand-made traces whose hits are counted by hand in the comments. */
class IdealHitRateTest {
    private static final long FINGERPRINT = 0x5EED;
    private static final int BS = 16;

    /** Tokens {@code from, from + 1, ...}: {@code length} of them. */
    private static int[] run(int from, int length) {
        return IntStream.range(from, from + length).toArray();
    }

    private static int[] concat(int[] a, int[] b) {
        return IntStream.concat(IntStream.of(a), IntStream.of(b)).toArray();
    }

    @Test
    void countsLeadingStoredBlocksUpToTheFirstMissAndNeverTheLastToken() {
        int[] a = run(1, 48); // 3 full blocks A0 A1 A2
        List<int[]> prompts = List.of(
                // 48 tokens, nothing stored: 0. Stores A0 A1 A2.
                a,
                // a + 20 tokens (68): may reuse (68-1)/16 = 4 blocks; A0 A1 A2 hit, block 3 is new: 3 x 16 = 48.
                // Stores its 68/16 = 4 full blocks.
                concat(a, run(1000, 20)),
                // a again, exactly 3 full blocks: all stored, but (48-1)/16 = 2 is the cap: 32.
                a,
                // A0 then new tokens (46): cap (46-1)/16 = 2; A0 hits, the next block misses: 16.
                concat(run(1, 16), run(2000, 30)),
                // Different first block, then A1's tokens (32): blocks chain, so A1's tokens after another
                // block are another block: 0.
                concat(run(3000, 16), run(17, 16)),
                // A0's first 10 tokens: no full block, cap (10-1)/16 = 0: 0.
                run(1, 10));
        // Σ cached = 0 + 48 + 32 + 16 + 0 + 0 = 96; Σ prompt = 48 + 68 + 48 + 46 + 32 + 10 = 252.

        IdealHitRate ideal = new IdealHitRate(FINGERPRINT, BS);
        int[] cached = prompts.stream().mapToInt(ideal::add).toArray();

        assertArrayEquals(new int[] {0, 48, 32, 16, 0, 0}, cached);
        assertEquals(new IdealHitRate.Result(96.0 / 252, 96, 252), ideal.result());
        assertEquals(96.0 / 252, IdealHitRate.of(prompts, FINGERPRINT, BS), 1e-12);
    }

    @Test
    void aRepeatOfExactlyKFullBlocksReusesKMinusOne() {
        int[] k4 = run(7, 4 * BS);

        IdealHitRate ideal = new IdealHitRate(FINGERPRINT, BS);

        assertEquals(0, ideal.add(k4));
        assertEquals(3 * BS, ideal.add(k4));
        assertEquals(3 * BS, ideal.add(k4.clone()));
        // One token more and the 4th block is no longer the last token's: all 4 hit.
        assertEquals(4 * BS, ideal.add(concat(k4, run(0, 1))));
    }

    /**
     * A Mooncake trace through TraceTokens. Ids [1, 2] at 1024 tokens are 64 blocks of 16 (32 per trace block).
     * Block size 16: r0 0 (stores 64); r1 [1, 3] at 1000: cap 999/16 = 62, trace block 1 hits its 32, then
     * block 3's tokens miss: 512; r2 repeats r0 (64 full blocks): cap 1023/16 = 63: 1008; r3 is r0's first
     * 600 tokens: cap 599/16 = 37, all stored: 592. Σ = 2112 of 1024 + 1000 + 1024 + 600 = 3648.
     * Block size 512: 0, then one block each (caps 999/512 = 1023/512 = 599/512 = 1): Σ = 1536.
     * The first two alone: 512 of 2024 at either size.
     */
    @ParameterizedTest(name = "block size {0}, {1} requests")
    @CsvSource({"16, 0, 2112, 3648", "512, 0, 1536, 3648", "16, 2, 512, 2024", "512, 2, 512, 2024", "16, 9, 2112, 3648"
    })
    void ofATraceDerivesThePromptsAndHonoursMaxRequests(int blockSize, int max, long cached, long prompt) {
        Trace trace = new Trace(
                "hand.jsonl",
                List.of(
                        new TraceRequest(0, 1024, 1, new long[] {1, 2}),
                        new TraceRequest(1, 1000, 1, new long[] {1, 3}),
                        new TraceRequest(2, 1024, 1, new long[] {1, 2}),
                        new TraceRequest(3, 600, 1, new long[] {1, 2})));

        IdealHitRate.Result result = IdealHitRate.of(trace, new TraceTokens(3, 32_000), FINGERPRINT, blockSize, max);

        assertEquals(new IdealHitRate.Result((double) cached / prompt, cached, prompt), result);
    }

    @Test
    void requestsWithoutPrefixInformationNeverHit() {
        List<TraceRequest> azure = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            azure.add(new TraceRequest(i, 100, 1));
        }

        IdealHitRate.Result result =
                IdealHitRate.of(new Trace("az.csv", azure), new TraceTokens(0, 1000), FINGERPRINT, BS, 0);

        assertEquals(new IdealHitRate.Result(0, 0, 5000), result);
    }

    @Test
    void noPromptsIsAZeroRateNotNaN() {
        assertEquals(0.0, IdealHitRate.of(List.of(), FINGERPRINT, BS));
        assertEquals(0.0, IdealHitRate.of(List.of(new int[0]), FINGERPRINT, BS));
    }

    @Test
    void refusesANonPositiveBlockSize() {
        assertThrows(IllegalArgumentException.class, () -> new IdealHitRate(FINGERPRINT, 0));
    }
}
