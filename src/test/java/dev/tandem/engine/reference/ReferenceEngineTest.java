package dev.tandem.engine.reference;

import static dev.tandem.engine.reference.EngineTestSupport.assertBitIdentical;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.KvCache;
import dev.tandem.engine.ModelConfig;
import dev.tandem.engine.Sampler;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.tokenizer.ByteTokenizer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ReferenceEngineTest {
    private static final ReferenceEngine ENGINE = ReferenceEngine.builtin(16);

    private static int[] prompt(String text) {
        return ENGINE.tokenizer().encode(text, true);
    }

    @Test
    void builtinModelShapeAndName() {
        assertEquals("tandem-builtin", ENGINE.info().name());
        assertEquals(ReferenceEngine.BUILTIN_CONFIG, ENGINE.info().config());
        assertEquals(4, ENGINE.info().config().kvHeads());
        assertEquals(16, ENGINE.kvLayout().blockSize());
        assertEquals(32, ENGINE.kvLayout().kvDim());
    }

    @Test
    void batchedDecodeIsBitIdenticalToDecodingAlone() {
        String[] texts = {"Hello", "A longer prompt, which spans more than two KV blocks of sixteen tokens.", "é"};
        int n = texts.length;
        List<KvCache> batch = new ArrayList<>();
        KvCache[] alone = new KvCache[n];
        int[] next = new int[n];
        for (int i = 0; i < n; i++) {
            int[] p = prompt(texts[i]);
            KvCache c = ENGINE.newCache();
            float[] logits = ENGINE.prefill(c, p, () -> false);
            batch.add(c);
            alone[i] = ENGINE.newCache();
            assertBitIdentical(logits, ENGINE.prefill(alone[i], p, () -> false), "prefill " + i);
            next[i] = Sampler.argmax(logits);
        }
        for (int step = 0; step < 6; step++) {
            float[][] batched = ENGINE.decodeStep(batch, next.clone());
            for (int i = 0; i < n; i++) {
                float[] single = ENGINE.decodeStep(List.of(alone[i]), new int[] {next[i]})[0];
                assertBitIdentical(single, batched[i], "step " + step + " sequence " + i);
                assertEquals(alone[i].length(), batch.get(i).length());
                next[i] = Sampler.sample(single, new SamplingParams(1.0, 0.9, 20, 7), alone[i].length());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 5, 31, 32, 33, 70})
    void prefillEqualsTokenByTokenDecode(int n) {
        int[] tokens = new int[n];
        tokens[0] = ByteTokenizer.BOS;
        for (int i = 1; i < n; i++) {
            tokens[i] = 'a' + (i * 7) % 26;
        }
        KvCache whole = ENGINE.newCache();
        float[] prefilled = ENGINE.prefill(whole, tokens, () -> false);

        KvCache stepwise = ENGINE.newCache();
        float[] logits = ENGINE.prefill(stepwise, new int[] {tokens[0]}, () -> false);
        for (int i = 1; i < n; i++) {
            logits = ENGINE.decodeStep(List.of(stepwise), new int[] {tokens[i]})[0];
        }
        assertBitIdentical(prefilled, logits, "logits after " + n + " tokens");
        assertEquals(n, whole.length());
        assertEquals(whole.blockCount(), stepwise.blockCount());
        for (int b = 0; b < whole.blockCount(); b++) {
            assertBitIdentical(whole.block(b), stepwise.block(b), "KV block " + b);
        }

        // resuming a prefill where the cache stands gives the same result as one call
        if (n > 2) {
            KvCache split = ENGINE.newCache();
            ENGINE.prefill(split, java.util.Arrays.copyOf(tokens, n / 2), () -> false);
            float[] resumed = ENGINE.prefill(split, java.util.Arrays.copyOfRange(tokens, n / 2, n), () -> false);
            assertBitIdentical(prefilled, resumed, "resumed prefill");
        }
    }

    @Test
    void greedyGenerationIsDeterministicAcrossEngineInstances() {
        ReferenceEngine other = ReferenceEngine.builtin(8); // block size does not change the math
        int[] p = prompt("Once upon a time");
        int[] a = EngineTestSupport.generate(ENGINE, p, 40);
        int[] b = EngineTestSupport.generate(other, p, 40);
        assertArrayEquals(a, b);
        assertEquals(ENGINE.info().fingerprint(), other.info().fingerprint());
        assertTrue(java.util.Arrays.stream(a).distinct().count() > 1, "a degenerate model repeats one token");
    }

    @Test
    void builtinFingerprintAndOutputArePinned() {
        // Pinned so that any change to the built-in weights, the fingerprint or the math shows up here
        // (and so that every JVM is checked to agree with these values).
        assertEquals(
                BUILTIN_FINGERPRINT,
                ENGINE.info().fingerprint(),
                Long.toHexString(ENGINE.info().fingerprint()));
        assertArrayEquals(BUILTIN_GREEDY, EngineTestSupport.generate(ENGINE, prompt("Once upon a time"), 12));
    }

    static final long BUILTIN_FINGERPRINT = 0xda98c5cecfb8881cL;
    static final int[] BUILTIN_GREEDY = {65, 209, 148, 59, 210, 157, 54, 112, 168, 24, 70, 195};

    @Test
    void tiedAndUntiedClassifiersBothWork() {
        ModelConfig tied = new ModelConfig(32, 48, 2, 4, 2, ByteTokenizer.VOCAB_SIZE, 64, true);
        ModelConfig untied = new ModelConfig(32, 48, 2, 4, 2, ByteTokenizer.VOCAB_SIZE, 64, false);
        ReferenceEngine t = ReferenceEngine.create("tied", ModelWeights.random(tied, 1), ByteTokenizer.INSTANCE, 8);
        ReferenceEngine u = ReferenceEngine.create("untied", ModelWeights.random(untied, 1), ByteTokenizer.INSTANCE, 8);
        assertTrue(t.info().config().sharedClassifier());
        assertTrue(!u.info().config().sharedClassifier());
        int[] p = prompt("tied?");
        float[] lt = t.prefill(t.newCache(), p, () -> false);
        float[] lu = u.prefill(u.newCache(), p, () -> false);
        assertEquals(258, lt.length);
        assertEquals(258, lu.length);
        // same seed and shapes up to the classifier: the tied head reuses the embedding instead
        assertNotEquals(java.util.Arrays.toString(lt), java.util.Arrays.toString(lu));
        assertNotEquals(t.info().fingerprint(), u.info().fingerprint());
    }

    @Test
    void invalidInputsAreRejectedClearly() {
        KvCache cache = ENGINE.newCache();
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> ENGINE.prefill(cache, new int[] {65, 258}, () -> false));
        assertTrue(e.getMessage().contains("258"), e.getMessage());
        assertEquals(0, cache.length());
        assertThrows(IllegalArgumentException.class, () -> ENGINE.prefill(cache, new int[] {-1}, () -> false));
        assertThrows(IllegalArgumentException.class, () -> ENGINE.prefill(cache, new int[0], () -> false));
        e = assertThrows(IllegalArgumentException.class, () -> ENGINE.prefill(cache, new int[513], () -> false));
        assertTrue(e.getMessage().contains("512"), e.getMessage());

        ENGINE.prefill(cache, new int[512], () -> false); // exactly the context fits
        e = assertThrows(IllegalArgumentException.class, () -> ENGINE.decodeStep(List.of(cache), new int[] {1}));
        assertTrue(e.getMessage().contains("context"), e.getMessage());

        KvCache fresh = ENGINE.newCache();
        assertThrows(IllegalArgumentException.class, () -> ENGINE.decodeStep(List.of(fresh, fresh), new int[] {1, 2}));
        assertThrows(IllegalArgumentException.class, () -> ENGINE.decodeStep(List.of(fresh), new int[] {1, 2}));
        KvCache foreign = ReferenceEngine.builtin(32).newCache();
        assertThrows(IllegalArgumentException.class, () -> ENGINE.prefill(foreign, new int[] {1}, () -> false));
        assertEquals(0, ENGINE.decodeStep(List.of(), new int[0]).length);
    }

    @Test
    void prefillCancelsBetweenPositionsAndLeavesAPartialCache() {
        KvCache cache = ENGINE.newCache();
        assertThrows(CancellationException.class, () -> ENGINE.prefill(cache, new int[10], () -> true));
        assertEquals(0, cache.length());

        AtomicInteger checks = new AtomicInteger();
        KvCache partial = ENGINE.newCache();
        assertThrows(
                CancellationException.class,
                () -> ENGINE.prefill(partial, new int[100], () -> checks.incrementAndGet() > 4));
        assertTrue(partial.length() > 0 && partial.length() < 100, "length " + partial.length());
        // the partial cache is consistent: continuing gives the same logits as an uninterrupted prefill
        float[] continued = ENGINE.prefill(partial, new int[100 - partial.length()], () -> false);
        assertBitIdentical(ENGINE.prefill(ENGINE.newCache(), new int[100], () -> false), continued, "continued");
    }

    @Test
    void concurrentCallsOnDifferentCachesAgree() throws Exception {
        int[] p = prompt("threads share weights, not caches");
        int[] expected = EngineTestSupport.generate(ENGINE, p, 20);
        List<Thread> threads = new ArrayList<>();
        List<int[]> results = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < 3; i++) {
            Thread th = new Thread(() -> results.add(EngineTestSupport.generate(ENGINE, p, 20)));
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        assertEquals(3, results.size());
        for (int[] r : results) {
            assertArrayEquals(expected, r);
        }
    }
}
