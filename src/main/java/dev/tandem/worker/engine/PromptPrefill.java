package dev.tandem.worker.engine;

import dev.tandem.engine.Engine;
import dev.tandem.engine.KvBlock;
import dev.tandem.engine.KvBlockPool;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.Sampler;
import dev.tandem.protocol.Sampling;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A prompt's KV and first token, reusing what a {@link BlockCache} holds: the prompt's longest cached
 * run of leading blocks is taken as it is and only the positions after it are computed — the same
 * K/V, logits and token as computing everything, since each position's K/V depends only on the tokens
 * up to it. The prompt's full blocks are cached afterwards. At least the last prompt token is always
 * computed: its logits give the first token. Blocking: for a compute thread.
 */
final class PromptPrefill {

    /** The prompt's KV (positions = prompt tokens), its first token, and how many prompt tokens were reused. */
    record Prefilled(KvCache cache, int firstToken, int cachedTokens, long micros) {}

    private PromptPrefill() {}

    static Prefilled run(
            Engine engine,
            KvBlockPool pool,
            BlockCache blocks,
            int[] prompt,
            Sampling sampling,
            BooleanSupplier cancelled) {
        return new Chunked(engine, pool, blocks, prompt, sampling, cancelled).next(Integer.MAX_VALUE);
    }

    /**
     * A prompt prefilled a chunk at a time, each chunk its own compute task, so that the thread runs other
     * work — a decode worker's steps — between chunks (chunked prefill). The chunks extend one cache, so the
     * K/V, logits and token are those of one call. Not thread-safe: one task at a time.
     */
    static final class Chunked {
        private final Engine engine;
        private final KvBlockPool pool;
        private final BlockCache blocks;
        private final int[] prompt;
        private final Sampling sampling;
        private final BooleanSupplier cancelled;
        private KvCache cache;
        private int cachedTokens;
        private long startNanos;
        private long computeNanos;

        Chunked(
                Engine engine,
                KvBlockPool pool,
                BlockCache blocks,
                int[] prompt,
                Sampling sampling,
                BooleanSupplier cancelled) {
            this.engine = engine;
            this.pool = pool;
            this.blocks = blocks;
            this.prompt = prompt;
            this.sampling = sampling;
            this.cancelled = cancelled;
        }

        /**
         * Computes the next chunk, at most {@code chunkTokens} (the first looks the prefix up and starts after
         * it): the prompt's KV and first token after its last chunk, else null. Blocking. On failure or
         * cancellation the cache is freed.
         */
        Prefilled next(int chunkTokens) {
            if (chunkTokens <= 0) {
                throw new IllegalArgumentException("chunk must be positive, got " + chunkTokens);
            }
            long start = System.nanoTime();
            try {
                if (cache == null) {
                    startNanos = start;
                    int bs = engine.kvLayout().blockSize();
                    BlockCache.Hit hit = blocks.lookup(prompt, (prompt.length - 1) / bs);
                    cache = new KvCache(engine.kvLayout(), pool);
                    hit.blocks().forEach(cache::addBlock);
                    cachedTokens = hit.tokens(bs);
                    cache.setLength(cachedTokens);
                }
                int from = cache.length();
                int to = (int) Math.min(prompt.length, (long) from + chunkTokens);
                float[] logits = engine.prefill(cache, Arrays.copyOfRange(prompt, from, to), cancelled);
                computeNanos += System.nanoTime() - start;
                if (to < prompt.length) {
                    return null;
                }
                int first = Sampler.sample(logits, EngineSampling.of(sampling), cache.length());
                blocks.store(
                        prompt,
                        fullBlocks(cache, prompt.length / engine.kvLayout().blockSize()));
                return new Prefilled(cache, first, cachedTokens, computeNanos / 1000);
            } catch (RuntimeException e) {
                free(); // cancelled or failed: its blocks go back, nobody else will
                throw e;
            }
        }

        /** When the first chunk started: with the end of the last, the prompt's wall time, steps between included. */
        long startNanos() {
            return startNanos;
        }

        /** Gives back the blocks of a prompt abandoned between chunks. */
        void free() {
            if (cache != null) {
                cache.free();
            }
        }
    }

    /** Why a prompt cannot be prefilled by this engine (empty, too long, a token outside the vocabulary), or null. */
    static String invalid(Engine engine, int[] tokens) {
        int seqLen = engine.info().config().seqLen();
        if (tokens.length == 0 || tokens.length >= seqLen) {
            return "prompt has " + tokens.length + " tokens; it must have 1 to " + (seqLen - 1);
        }
        int vocab = engine.info().config().vocabSize();
        for (int t : tokens) {
            if (t < 0 || t >= vocab) {
                return "token id " + t + " is outside the vocabulary [0, " + vocab + ")";
            }
        }
        return null;
    }

    static List<KvBlock> fullBlocks(KvCache cache, int count) {
        List<KvBlock> out = new ArrayList<>(count);
        for (int b = 0; b < count; b++) {
            out.add(cache.kvBlock(b));
        }
        return out;
    }
}
