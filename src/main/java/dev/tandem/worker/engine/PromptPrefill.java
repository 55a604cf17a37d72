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
        long start = System.nanoTime();
        int bs = engine.kvLayout().blockSize();
        BlockCache.Hit hit = blocks.lookup(prompt, (prompt.length - 1) / bs);
        KvCache cache = new KvCache(engine.kvLayout(), pool);
        hit.blocks().forEach(cache::addBlock);
        int cached = hit.tokens(bs);
        try {
            cache.setLength(cached);
            float[] logits = engine.prefill(cache, Arrays.copyOfRange(prompt, cached, prompt.length), cancelled);
            int first = Sampler.sample(logits, EngineSampling.of(sampling), cache.length());
            blocks.store(prompt, fullBlocks(cache, prompt.length / bs));
            return new Prefilled(cache, first, cached, (System.nanoTime() - start) / 1000);
        } catch (RuntimeException e) {
            cache.free(); // cancelled or failed: its blocks go back, nobody else will
            throw e;
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
