package dev.tandem.router;

import dev.tandem.protocol.BlockHashes;
import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerView;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A prompt against the workers' KV caches: its block hashes for each model (fingerprint and block size)
 * whose workers announce a cache, and how many of its leading blocks each worker holds, from a
 * {@link PrefixLookup} (the prefix index, or a router's {@link RoutedPrefixTrees}). A worker that
 * announces no cache holds nothing.
 *
 * @param hashes the prompt's block hashes per model fingerprint, with that model's block size
 */
record PromptPrefixes(int promptBlocks, Map<String, Integer> cachedBlocks, Map<Long, Hashes> hashes) {

    static final PromptPrefixes NONE = new PromptPrefixes(0, Map.of(), Map.of());

    private static final long[] NO_BLOCKS = new long[0];

    /** A model's block size and the prompt's block hashes in it. */
    record Hashes(int blockSize, long[] blocks) {}

    static PromptPrefixes of(int[] prompt, List<WorkerView> workers, PrefixLookup index) {
        Map<Long, Integer> blockSizes = new HashMap<>();
        for (WorkerView w : workers) {
            CacheSpec spec = w.worker().cache();
            if (spec != null) {
                blockSizes.putIfAbsent(w.modelFingerprint(), spec.blockSize());
            }
        }
        if (blockSizes.isEmpty()) {
            return NONE;
        }
        Map<String, Integer> cached = new HashMap<>();
        Map<Long, Hashes> hashes = new HashMap<>();
        int promptBlocks = 0;
        for (Map.Entry<Long, Integer> model : blockSizes.entrySet()) {
            long[] blocks = BlockHashes.of(model.getKey(), model.getValue(), prompt);
            hashes.put(model.getKey(), new Hashes(model.getValue(), blocks));
            promptBlocks = Math.max(promptBlocks, blocks.length);
            if (blocks.length > 0) {
                index.leadingBlocks(blocks).forEach((worker, n) -> cached.merge(worker, n, Math::max));
            }
        }
        // Only workers of that model and block size: another's cache cannot hold these blocks.
        for (WorkerView w : workers) {
            CacheSpec spec = w.worker().cache();
            if (spec == null || spec.blockSize() != blockSizes.get(w.modelFingerprint())) {
                cached.remove(w.id());
            }
        }
        // Immutable once: the scheduling requests built from it then share it instead of copying it.
        return new PromptPrefixes(promptBlocks, Map.copyOf(cached), hashes);
    }

    int cached(String workerId) {
        return cachedBlocks.getOrDefault(workerId, 0);
    }

    /** The same prompt with nothing known to be cached anywhere. */
    PromptPrefixes nothingCached() {
        return new PromptPrefixes(promptBlocks, Map.of(), hashes);
    }

    /**
     * The prompt's block hashes as {@code worker}'s cache would name them; none when it announces no cache
     * or hashes with another block size than its model's first.
     */
    long[] blocksFor(WorkerView worker) {
        CacheSpec spec = worker.worker().cache();
        Hashes h = hashes.get(worker.modelFingerprint());
        return spec == null || h == null || h.blockSize() != spec.blockSize() ? NO_BLOCKS : h.blocks();
    }
}
