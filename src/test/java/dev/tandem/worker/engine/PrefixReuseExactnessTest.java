package dev.tandem.worker.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.ModelConfig;
import dev.tandem.engine.StopCondition;
import dev.tandem.engine.reference.Llama2cCheckpointWriter;
import dev.tandem.engine.reference.ModelWeights;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.engine.tokenizer.ByteTokenizer;
import dev.tandem.protocol.Sampling;
import dev.tandem.worker.kv.KvTransferAssembler;
import dev.tandem.worker.kv.KvTransferCodec;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Reused KV is the same KV: with a prefix-cache hit, with an incremental transfer (the decode side
 * supplying the leading blocks) and with a local prefill on kept blocks, the K/V, the first token and
 * every decoded token equal an uncached run's — for the built-in model and for a llama2.c checkpoint
 * file, greedy and seeded.
 */
class PrefixReuseExactnessTest {
    private static final int MAX_NEW = 24;
    private static final Engine BUILTIN = ReferenceEngine.builtin(16);
    private static final Engine LLAMA2C = llama2cCheckpoint();

    /** A llama2.c checkpoint written to a file and loaded back (block size 8, so prompts span many blocks). */
    private static Engine llama2cCheckpoint() {
        try {
            Path file = Files.createTempFile("tandem-reuse-", ".bin");
            file.toFile().deleteOnExit();
            ModelConfig config = new ModelConfig(48, 128, 3, 6, 2, ByteTokenizer.VOCAB_SIZE, 384, false);
            Llama2cCheckpointWriter.write(file, ModelWeights.random(config, 11));
            return ReferenceEngine.load(file, null, 8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (Engine engine : List.of(BUILTIN, LLAMA2C)) {
            out.add(Arguments.of(engine.info().name(), engine, Sampling.GREEDY));
            out.add(Arguments.of(engine.info().name(), engine, new Sampling(0.8, 0.95, 0, 77)));
        }
        return out.stream();
    }

    private static final String SYSTEM = "You are a helpful assistant who answers briefly and exactly. ";

    private static int[] tokens(Engine engine, String text) {
        return engine.tokenizer().encode(text, true);
    }

    /** The uncached reference: one process, from scratch. */
    private static int[] expected(Engine engine, int[] prompt, Sampling sampling) {
        return new LocalGenerator(engine)
                .generate(prompt, EngineSampling.of(sampling), MAX_NEW, new int[0])
                .tokens();
    }

    @ParameterizedTest(name = "{0}, {2}")
    @MethodSource("cases")
    void aPrefixCacheHitComputesTheSameKvAndTokens(String name, Engine engine, Sampling sampling) {
        BlockCache cache = new BlockCache(engine.kvLayout(), engine.info().fingerprint(), 64L << 20);
        PromptPrefill.run(engine, null, cache, tokens(engine, SYSTEM + "What is a block?"), sampling, () -> false);
        int[] prompt = tokens(engine, SYSTEM + "And what is a prefix?");
        PromptPrefill.Prefilled hit = PromptPrefill.run(engine, null, cache, prompt, sampling, () -> false);
        assertTrue(hit.cachedTokens() >= engine.kvLayout().blockSize(), "the shared system prompt was reused");

        KvCache uncached = engine.newCache();
        engine.prefill(uncached, prompt, () -> false);
        assertSameKv(uncached, hit.cache());
        assertArrayEquals(expected(engine, prompt, sampling), decode(engine, hit, prompt, sampling));
    }

    @ParameterizedTest(name = "{0}, {2}")
    @MethodSource("cases")
    void anIncrementalTransferRebuildsTheSameKvAndTokens(String name, Engine engine, Sampling sampling)
            throws Exception {
        int[] prompt = tokens(engine, SYSTEM + "Tell me about incremental transfers, please.");
        int bs = engine.kvLayout().blockSize();
        PromptPrefill.Prefilled computed = PromptPrefill.run(
                engine,
                null,
                new BlockCache(engine.kvLayout(), engine.info().fingerprint(), 0),
                prompt,
                sampling,
                () -> false);
        // The decode worker kept the first blocks of an earlier sequence with the same start.
        BlockCache kept = new BlockCache(engine.kvLayout(), engine.info().fingerprint(), 64L << 20);
        int shared = (SYSTEM.length() + 1) / bs;
        kept.store(Arrays.copyOf(prompt, shared * bs), PromptPrefill.fullBlocks(computed.cache(), shared));
        int start = shared - 1;
        KvTransferAssembler assembler = new KvTransferAssembler(
                engine.kvLayout(),
                engine.info().fingerprint(),
                1L << 30,
                (ids, blocks) -> kept.lookup(ids, blocks).blocks(),
                null);
        List<Buffer> chunks =
                KvTransferCodec.encode(computed.cache(), engine.info().fingerprint(), 500, prompt, start);
        for (Buffer chunk : chunks) {
            assembler.accept(chunk);
        }
        KvCache received = assembler.finish();
        long full = KvTransferCodec.encodedSize(engine.kvLayout(), prompt.length);
        long sent = chunks.stream().mapToLong(Buffer::length).sum();
        assertTrue(sent < full, "the leading blocks stayed home: " + sent + " of " + full + " bytes");
        assertSameKv(computed.cache(), received);
        assertArrayEquals(
                expected(engine, prompt, sampling),
                decode(engine, new PromptPrefill.Prefilled(received, computed.firstToken(), 0, 0), prompt, sampling));
    }

    @ParameterizedTest(name = "{0}, {2}")
    @MethodSource("cases")
    void aLocalPrefillOnKeptBlocksGivesTheSameTokens(String name, Engine engine, Sampling sampling) {
        // Turn one, decoded to the end; its prompt and answer are kept as a finished sequence's blocks.
        int[] first = tokens(engine, SYSTEM + "user: hi there\nassistant:");
        BlockCache kept = new BlockCache(engine.kvLayout(), engine.info().fingerprint(), 64L << 20);
        PromptPrefill.Prefilled turnOne = PromptPrefill.run(
                engine,
                null,
                new BlockCache(engine.kvLayout(), engine.info().fingerprint(), 0),
                first,
                sampling,
                () -> false);
        int[] answer = decode(engine, turnOne, first, sampling, kept);
        // Turn two: the first turn, its answer, and a new message.
        int[] second = concat(concat(first, answer), tokens(engine, "\nuser: and then?\nassistant:"));
        second = Arrays.copyOf(
                second, Math.min(second.length, engine.info().config().seqLen() - MAX_NEW - 2));
        PromptPrefill.Prefilled local = PromptPrefill.run(engine, null, kept, second, sampling, () -> false);
        assertTrue(
                local.cachedTokens() >= first.length - engine.kvLayout().blockSize(),
                "the first turn's blocks were reused: " + local.cachedTokens() + " of " + second.length);
        assertArrayEquals(expected(engine, second, sampling), decode(engine, local, second, sampling));
    }

    @ParameterizedTest(name = "{0}, {2}")
    @MethodSource("cases")
    void aChunkedPrefillGivesTheSameKvAndTokensAsOneCall(String name, Engine engine, Sampling sampling) {
        int[] prompt = tokens(engine, SYSTEM + "Chunk me: a prompt computed a few tokens at a time.");
        BlockCache kept = new BlockCache(engine.kvLayout(), engine.info().fingerprint(), 64L << 20);
        PromptPrefill.run(
                engine, null, kept, Arrays.copyOf(prompt, 2 * engine.kvLayout().blockSize()), sampling, () -> false);
        // 7 tokens a chunk: chunks that end inside blocks, after a reused prefix of whole blocks.
        PromptPrefill.Chunked chunked = new PromptPrefill.Chunked(engine, null, kept, prompt, sampling, () -> false);
        PromptPrefill.Prefilled done = null;
        int calls = 0;
        while (done == null) {
            done = chunked.next(7);
            calls++;
        }
        int computed = prompt.length - done.cachedTokens();
        assertTrue(done.cachedTokens() > 0, "the kept prefix was reused");
        assertEquals((computed + 6) / 7, calls, "one call per chunk of 7 tokens");

        KvCache whole = engine.newCache();
        engine.prefill(whole, prompt, () -> false);
        assertSameKv(whole, done.cache());
        assertArrayEquals(expected(engine, prompt, sampling), decode(engine, done, prompt, sampling));
    }

    private static int[] decode(Engine engine, PromptPrefill.Prefilled prefilled, int[] prompt, Sampling sampling) {
        return decode(engine, prefilled, prompt, sampling, null);
    }

    /**
     * Decodes in a batch as a decode worker would; with {@code keep}, the finished sequence's blocks are
     * kept there (prompt and generated tokens).
     */
    private static int[] decode(
            Engine engine, PromptPrefill.Prefilled prefilled, int[] prompt, Sampling sampling, BlockCache keep) {
        int seqLen = engine.info().config().seqLen();
        StopCondition stop = new StopCondition(engine.tokenizer(), new int[0], MAX_NEW, prompt.length, seqLen);
        List<Integer> out = new ArrayList<>();
        StopCondition.Outcome firstOutcome = stop.check(prefilled.firstToken(), 1);
        if (firstOutcome != StopCondition.Outcome.STOP) {
            out.add(prefilled.firstToken());
        }
        if (firstOutcome.finished()) {
            return out.stream().mapToInt(Integer::intValue).toArray();
        }
        DecodeBatch batch = new DecodeBatch(engine, 4, s -> {
            if (keep != null) {
                int[] history = s.history();
                keep.store(
                        history,
                        PromptPrefill.fullBlocks(
                                s.cache, history.length / engine.kvLayout().blockSize()));
            }
        });
        DecodeSequence target = new DecodeSequence(
                1,
                "router",
                null,
                prefilled.cache(),
                EngineSampling.of(sampling),
                stop,
                prefilled.firstToken(),
                1,
                prompt);
        batch.join(target);
        String finish = null;
        while (finish == null) {
            DecodeBatch.Step step = batch.begin();
            for (DecodeBatch.Outcome o : batch.complete(step, batch.compute(step))) {
                for (int t : o.tokens()) {
                    out.add(t);
                }
                finish = o.finishReason();
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private static void assertSameKv(KvCache expected, KvCache actual) {
        assertEquals(expected.length(), actual.length());
        int blocks = expected.layout().blocksFor(expected.length());
        for (int b = 0; b < blocks; b++) {
            assertArrayEquals(bits(expected.block(b)), bits(actual.block(b)), "block " + b);
        }
    }

    private static int[] bits(float[] values) {
        int[] out = new int[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = Float.floatToRawIntBits(values[i]);
        }
        return out;
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
