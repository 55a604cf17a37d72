package dev.tandem.engine.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.KvCache;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.tokenizer.ByteTokenizer;
import java.util.List;
import java.util.concurrent.CancellationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SimEngineTest {
    private static final SimProfile H100 = SimProfiles.named("llama3-8b-h100");

    @Test
    void countsTheSimulatedModelsKvBytesWhileHoldingAStandInPerPosition() {
        SimEngine engine = new SimEngine(H100, 1e6, 16);
        assertEquals(16L * 131_072, engine.kvLayout().blockBytes());
        assertEquals(2 * 16 * Float.BYTES, engine.kvLayout().wireBlockBytes());
        KvCache cache = engine.newCache();
        engine.prefill(cache, new int[40], () -> false);
        assertEquals(40, cache.length());
        assertEquals(3 * 16L * 131_072, cache.bytes());
        assertEquals(131_072, engine.info().config().seqLen());
        assertEquals("sim-llama-3.1-8b", engine.info().name());
    }

    @Test
    void itsTokensAreAPureFunctionOfThePromptAndNeverEndTheSequence() {
        SimEngine a = new SimEngine(H100, 1e6, 16);
        SimEngine b = new SimEngine(H100, 1e6, 16);
        int[] prompt = ByteTokenizer.INSTANCE.encode("the same prompt", true);
        LocalGenerator.Result greedy =
                new LocalGenerator(a).generate(prompt, new SamplingParams(0, 1, 0, 0), 50, new int[0]);
        LocalGenerator.Result seeded =
                new LocalGenerator(b).generate(prompt, new SamplingParams(1.2, 0.9, 0, 77), 50, new int[0]);
        assertArrayEquals(greedy.tokens(), seeded.tokens(), "the same tokens whatever the sampling");
        assertEquals("length", greedy.finishReason());
        for (int t : greedy.tokens()) {
            assertTrue(t == ' ' || (t >= 'a' && t <= 'z'), "token " + t);
        }
        int[] other = ByteTokenizer.INSTANCE.encode("another prompt", true);
        assertNotEquals(
                java.util.Arrays.toString(greedy.tokens()),
                java.util.Arrays.toString(new LocalGenerator(a)
                        .generate(other, new SamplingParams(0, 1, 0, 0), 50, new int[0])
                        .tokens()));
    }

    @Test
    void prefillTakesTheProfilesTimeDividedByTheTimeScale() {
        // 12,000 tokens from scratch: 0.466 s simulated; at 10× that is 46.6 ms of wall clock.
        SimEngine engine = new SimEngine(H100, 10, 16);
        long start = System.nanoTime();
        engine.prefill(engine.newCache(), new int[12_000], () -> false);
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(tookMillis >= 46, "took " + tookMillis + " ms");
    }

    @Test
    void aReusedPrefixIsNotPaidForAgain() {
        SimEngine engine = new SimEngine(H100, 1, 16);
        KvCache cache = engine.newCache();
        cache.ensureCapacity(11_488);
        cache.setLength(11_488); // as if reused from a prefix cache
        long start = System.nanoTime();
        engine.prefill(cache, new int[512], () -> false);
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        // 23 ms for the last 512 tokens against 466 ms for all 12,000.
        assertTrue(tookMillis >= 23 && tookMillis < 300, "took " + tookMillis + " ms");
    }

    @Test
    void aCancelStopsAPrefillBeforeItsTimeIsUp() {
        SimEngine engine = new SimEngine(H100, 1, 16);
        long start = System.nanoTime();
        assertThrows(
                CancellationException.class,
                () -> engine.prefill(engine.newCache(), new int[12_000], () -> System.nanoTime() - start > 20_000_000));
        assertTrue((System.nanoTime() - start) / 1_000_000 < 300);
    }

    @Test
    void aDecodeStepAdvancesEverySequenceOfTheBatch() {
        SimEngine engine = new SimEngine(H100, 1e6, 16);
        KvCache x = engine.newCache();
        KvCache y = engine.newCache();
        engine.prefill(x, new int[] {1, 2, 3}, () -> false);
        engine.prefill(y, new int[] {4}, () -> false);
        float[][] logits = engine.decodeStep(List.of(x, y), new int[] {'a', 'b'});
        assertEquals(2, logits.length);
        assertEquals(4, x.length());
        assertEquals(2, y.length());
        assertEquals('a', x.blockFor(3)[x.offset(0, 0, 3)]);
        assertThrows(IllegalArgumentException.class, () -> engine.decodeStep(List.of(x, x), new int[] {1, 2}));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 258})
    void refusesTokensOutsideTheVocabulary(int token) {
        SimEngine engine = new SimEngine(H100, 1e6, 16);
        assertThrows(
                IllegalArgumentException.class,
                () -> engine.prefill(engine.newCache(), new int[] {token}, () -> false));
    }

    @ParameterizedTest
    @ValueSource(doubles = {0, -1, Double.NaN, Double.POSITIVE_INFINITY})
    void refusesATimeScaleThatIsNotAPositiveNumber(double scale) {
        assertThrows(IllegalArgumentException.class, () -> new SimEngine(H100, scale, 16));
    }

    @Test
    void transfersTakeTheModelledBandwidthScaled() {
        SimEngine engine = new SimEngine(H100, 10, 16);
        assertEquals(3_145_728, engine.transferNanos(1_572_864_000L), 1);
    }
}
