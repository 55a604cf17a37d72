package dev.tandem.worker.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.Sampler;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.StopCondition;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.worker.kv.KvTransferAssembler;
import dev.tandem.worker.kv.KvTransferCodec;
import io.vertx.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Prefill here, KV through the wire codec, decode there in a batch with other sequences: the tokens
 * and every logit must be bit-identical to generating in one process.
 */
class DisaggregatedExactnessTest {
    private static final Engine ENGINE = ReferenceEngine.builtin(16);
    private static final int MAX_NEW = 20;

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("Hello, disaggregated world", SamplingParams.GREEDY, 0),
                Arguments.of("Hello, disaggregated world", new SamplingParams(0.8, 0.95, 0, 7), 2),
                Arguments.of("a", new SamplingParams(1.0, 1.0, 0, 42), 3),
                Arguments.of(
                        "The KV cache of a long prompt crosses several blocks of sixteen tokens each.",
                        new SamplingParams(1.2, 0.9, 40, 1234),
                        1),
                Arguments.of("ünïcödé → 漢字", new SamplingParams(0.7, 1.0, 5, -99), 4));
    }

    @ParameterizedTest(name = "[{index}] \"{0}\" {1} with {2} other sequences")
    @MethodSource("cases")
    void disaggregatedRunEqualsSingleProcessRun(String prompt, SamplingParams sampling, int others) throws Exception {
        int[] tokens = ENGINE.tokenizer().encode(prompt, true);
        List<float[]> expectedLogits = new ArrayList<>();
        LocalGenerator.Result expected = new LocalGenerator(ENGINE)
                .generate(tokens, sampling, MAX_NEW, new int[0], (i, logits) -> expectedLogits.add(logits.clone()));

        // Prefill worker: compute, sample the first token, encode the KV in small chunks.
        KvCache prefillCache = ENGINE.newCache();
        float[] firstLogits = ENGINE.prefill(prefillCache, tokens, () -> false);
        int first = Sampler.sample(firstLogits, sampling, prefillCache.length());
        List<Buffer> chunks = KvTransferCodec.encode(prefillCache, ENGINE.info().fingerprint(), 1000);
        assertTrue(chunks.size() > 1, "the KV must really be chunked");

        // Decode worker: reassemble and decode inside a batch that holds other sequences.
        KvTransferAssembler assembler =
                new KvTransferAssembler(ENGINE.kvLayout(), ENGINE.info().fingerprint(), 1 << 30);
        for (Buffer chunk : chunks) {
            assembler.accept(chunk);
        }
        KvCache decodeCache = assembler.finish();
        DecodeBatch batch = new DecodeBatch(ENGINE, 16);
        for (int i = 0; i < others; i++) {
            batch.join(otherSequence(1000 + i, "other prompt number " + i + " " + "x".repeat(i * 7)));
        }
        int seqLen = ENGINE.info().config().seqLen();
        DecodeSequence target = new DecodeSequence(
                1,
                "router",
                null,
                decodeCache,
                sampling,
                new StopCondition(ENGINE.tokenizer(), new int[0], MAX_NEW, tokens.length, seqLen),
                first,
                1,
                null);

        List<float[]> actualLogits = new ArrayList<>();
        actualLogits.add(firstLogits);
        List<Integer> actual = new ArrayList<>();
        StopCondition.Outcome firstOutcome =
                new StopCondition(ENGINE.tokenizer(), new int[0], MAX_NEW, tokens.length, seqLen).check(first, 1);
        if (firstOutcome != StopCondition.Outcome.STOP) {
            actual.add(first);
        }
        String finish = firstOutcome.finished() ? firstOutcome.finishReason() : null;
        if (finish == null) {
            batch.join(target);
        }
        while (finish == null) {
            DecodeBatch.Step step = batch.begin();
            DecodeBatch.StepResult result = batch.compute(step);
            int index = step.sequences().indexOf(target);
            actualLogits.add(result.logits()[index].clone());
            for (DecodeBatch.Outcome o : batch.complete(step, result)) {
                if (o.sequence() == target) {
                    for (int t : o.tokens()) {
                        actual.add(t);
                    }
                    finish = o.finishReason();
                }
            }
        }

        assertArrayEquals(
                expected.tokens(), actual.stream().mapToInt(Integer::intValue).toArray());
        assertEquals(expected.finishReason(), finish);
        assertEquals(expectedLogits.size(), actualLogits.size());
        for (int i = 0; i < expectedLogits.size(); i++) {
            assertArrayEquals(bits(expectedLogits.get(i)), bits(actualLogits.get(i)), "logits of generated token " + i);
        }
    }

    private static DecodeSequence otherSequence(long id, String prompt) {
        int[] tokens = ENGINE.tokenizer().encode(prompt, true);
        KvCache cache = ENGINE.newCache();
        float[] logits = ENGINE.prefill(cache, tokens, () -> false);
        SamplingParams sampling = new SamplingParams(0.9, 1.0, 0, id);
        int first = Sampler.sample(logits, sampling, cache.length());
        // Long-lived neighbours: they must not finish before the target does.
        return new DecodeSequence(
                id,
                "router",
                null,
                cache,
                sampling,
                new StopCondition(
                        ENGINE.tokenizer(),
                        new int[0],
                        400,
                        tokens.length,
                        ENGINE.info().config().seqLen()),
                first,
                1,
                null);
    }

    private static int[] bits(float[] values) {
        int[] out = new int[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = Float.floatToRawIntBits(values[i]);
        }
        return out;
    }
}
