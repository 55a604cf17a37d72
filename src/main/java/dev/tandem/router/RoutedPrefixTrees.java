package dev.tandem.router;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one router remembers having routed to each worker of one pool — SGLang's approximate radix tree
 * per worker, over KV block hashes instead of characters. It knows nothing of what the workers really
 * hold: only which prompts this router sent where (another replica's traffic is not in it).
 *
 * <p>A block hash is chained over every block before it ({@code protocol/BlockHashes}), so a worker's
 * set of hashes is a radix tree over blocks: a prompt's routed prefix is its leading hashes that are in
 * the set. Each worker's set is bounded to {@code maxBlocksPerWorker}; past it the least recently routed
 * block goes. A prompt's blocks are touched last to first, so a block is always more recent than the
 * blocks after it and eviction takes leaves first, as SGLang's LRU over leaves does (SGLang evicts every
 * {@code eviction_interval_secs}; here the bound holds after every insert).
 *
 * <p>Loop only: not thread-safe.
 */
public final class RoutedPrefixTrees implements PrefixLookup {
    private final long maxBlocksPerWorker;
    private final Map<String, LinkedHashMap<Long, Boolean>> trees = new HashMap<>();

    /** @param maxBlocksPerWorker the most blocks remembered per worker (at least 1) */
    public RoutedPrefixTrees(long maxBlocksPerWorker) {
        if (maxBlocksPerWorker < 1) {
            throw new IllegalArgumentException("a routed-prefix tree holds at least one block");
        }
        this.maxBlocksPerWorker = maxBlocksPerWorker;
    }

    /** Records that a prompt with these block hashes was routed to {@code workerId}. */
    public void insert(String workerId, long[] blockHashes) {
        LinkedHashMap<Long, Boolean> tree = trees.computeIfAbsent(workerId, w -> new LinkedHashMap<>(16, 0.75f, true));
        for (int i = blockHashes.length - 1; i >= 0; i--) {
            tree.put(blockHashes[i], Boolean.TRUE);
        }
        var eldest = tree.keySet().iterator();
        while (tree.size() > maxBlocksPerWorker) {
            eldest.next();
            eldest.remove();
        }
    }

    /** Per worker routed at least the first block, how many leading blocks of the prompt it was routed. */
    @Override
    public Map<String, Integer> leadingBlocks(long[] blockHashes) {
        Map<String, Integer> out = new HashMap<>();
        if (blockHashes.length == 0) {
            return out;
        }
        trees.forEach((worker, tree) -> {
            int n = 0;
            // containsKey does not count as an access: looking does not reorder the LRU.
            while (n < blockHashes.length && tree.containsKey(blockHashes[n])) {
                n++;
            }
            if (n > 0) {
                out.put(worker, n);
            }
        });
        return out;
    }

    /** Per worker routed anything, how many blocks its tree holds. */
    public Map<String, Long> sizes() {
        Map<String, Long> out = new HashMap<>();
        trees.forEach((worker, tree) -> out.put(worker, (long) tree.size()));
        return out;
    }

    /** The blocks remembered for {@code workerId} (0 for a worker never routed to). */
    public long size(String workerId) {
        LinkedHashMap<Long, Boolean> tree = trees.get(workerId);
        return tree == null ? 0 : tree.size();
    }

    /** A worker that left the registry leaves its tree. */
    public void forgetWorker(String workerId) {
        trees.remove(workerId);
    }

    /** Workers with a tree. */
    public int workers() {
        return trees.size();
    }
}
