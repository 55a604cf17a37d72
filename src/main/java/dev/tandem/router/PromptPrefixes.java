package dev.tandem.router;

import dev.tandem.protocol.BlockHashes;
import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerView;
import dev.tandem.router.scheduling.PromptHashes;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A prompt against the workers' KV caches: its block hashes for each model (fingerprint and block size)
 * whose workers announce a cache, and how many of its leading blocks each worker holds, from a
 * {@link PrefixLookup} (the prefix index). A worker that announces no cache holds nothing.
 */
record PromptPrefixes(int promptBlocks, Map<String, Integer> cachedBlocks, PromptHashes hashes) {

    static final PromptPrefixes NONE = new PromptPrefixes(0, Map.of(), PromptHashes.NONE);

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
        Map<Long, PromptHashes.Hashes> hashes = new HashMap<>();
        int promptBlocks = 0;
        for (Map.Entry<Long, Integer> model : blockSizes.entrySet()) {
            long[] blocks = BlockHashes.of(model.getKey(), model.getValue(), prompt);
            hashes.put(model.getKey(), new PromptHashes.Hashes(model.getValue(), blocks));
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
        return new PromptPrefixes(promptBlocks, Map.copyOf(cached), new PromptHashes(hashes));
    }

    int cached(String workerId) {
        return cachedBlocks.getOrDefault(workerId, 0);
    }
}
