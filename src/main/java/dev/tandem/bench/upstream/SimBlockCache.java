package dev.tandem.bench.upstream;

import dev.tandem.engine.SplitMix64;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * A GPU engine's prefix cache as vLLM keeps it, for the sim front: full blocks of the prompt keyed by
 * a hash chained over the parent block and the block's tokens (its own scheme, not Tandem's), least
 * recently used evicted first, every store and eviction told as a KV event. Confined to one thread.
 */
final class SimBlockCache {
    private final int blockSize;
    private final long capacityBlocks;
    private final long seed;
    /** Access-ordered: the eldest is the least recently used. */
    private final LinkedHashMap<Long, Boolean> blocks = new LinkedHashMap<>(1 << 12, 0.75f, true);

    /**
     * @param seed the engine's hash seed (vLLM's {@code NONE_HASH}: random per engine unless
     *     {@code PYTHONHASHSEED} is set), so that two engines' hashes of one prompt differ
     */
    SimBlockCache(int blockSize, long capacityBlocks, long seed) {
        this.blockSize = blockSize;
        this.capacityBlocks = capacityBlocks;
        this.seed = seed;
    }

    /** The prompt's leading tokens held (whole blocks), and marks those blocks recently used. */
    int cachedTokens(int[] prompt) {
        long parent = seed;
        int held = 0;
        for (int b = 0; (b + 1) * blockSize <= prompt.length; b++) {
            long h = hash(parent, prompt, b);
            if (blocks.get(h) == null) {
                break;
            }
            held = (b + 1) * blockSize;
            parent = h;
        }
        return held;
    }

    /** Stores the prompt's full blocks: the events for the blocks added and those evicted for them. */
    List<VllmKvEventPublisher.Event> store(int[] prompt) {
        long parent = seed;
        int from = -1;
        Long firstParent = null;
        List<Long> added = new ArrayList<>();
        int full = prompt.length / blockSize;
        long[] chain = new long[full];
        for (int b = 0; b < full; b++) {
            long h = hash(parent, prompt, b);
            chain[b] = h;
            // Past the first block not held, every block is computed anew and stored, as in vLLM.
            if (from >= 0 || blocks.get(h) == null) {
                if (from < 0) {
                    from = b;
                    firstParent = b == 0 ? null : parent;
                }
                added.add(h);
            }
            parent = h;
        }
        List<VllmKvEventPublisher.Event> events = new ArrayList<>(2);
        if (added.isEmpty()) {
            return events;
        }
        // Room first, as an engine frees blocks before it fills them; never this prompt's own blocks.
        long fresh = added.stream().filter(h -> !blocks.containsKey(h)).count();
        long over = blocks.size() + fresh - capacityBlocks;
        List<Long> evicted = new ArrayList<>();
        java.util.Set<Long> own = new java.util.HashSet<>(chain.length * 2);
        for (long h : chain) {
            own.add(h);
        }
        Iterator<Long> eldest = blocks.keySet().iterator();
        while (over > 0 && eldest.hasNext()) {
            Long h = eldest.next();
            if (!own.contains(h)) {
                eldest.remove();
                evicted.add(h);
                over--;
            }
        }
        if (!evicted.isEmpty()) {
            events.add(VllmKvEventPublisher.removed(toArray(evicted)));
        }
        for (long h : added) {
            blocks.put(h, Boolean.TRUE);
        }
        int[] tokens = Arrays.copyOfRange(prompt, from * blockSize, (from + added.size()) * blockSize);
        events.add(VllmKvEventPublisher.stored(toArray(added), firstParent, tokens, blockSize));
        return events;
    }

    /** Blocks held. */
    int size() {
        return blocks.size();
    }

    long capacityBlocks() {
        return capacityBlocks;
    }

    private long hash(long parent, int[] prompt, int block) {
        long h = parent;
        for (int i = block * blockSize; i < (block + 1) * blockSize; i++) {
            h = SplitMix64.mix(h * 31 + prompt[i]);
        }
        return h;
    }

    private static long[] toArray(List<Long> hashes) {
        long[] out = new long[hashes.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = hashes.get(i);
        }
        return out;
    }
}
