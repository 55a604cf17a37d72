package dev.tandem.router.scheduling;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
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
 * <p>Every router's trees, over both pools and every model, also share one bound in blocks (its share of
 * the node's memory budget, {@link Allowance}): past it, the tree that grows gives up blocks of its largest
 * worker's tree, least recently routed first.
 *
 * <p>Loop only: not thread-safe.
 */
public final class RoutedPrefixTrees {

    /** Blocks every tree of one router may hold together. Loop only, like the trees. */
    public static final class Allowance {
        private final long maxBlocks;
        private long held;

        public Allowance(long maxBlocks) {
            if (maxBlocks < 1) {
                throw new IllegalArgumentException("routed-prefix trees hold at least one block");
            }
            this.maxBlocks = maxBlocks;
        }

        /** No bound beyond each tree's own. */
        public static Allowance unbounded() {
            return new Allowance(Long.MAX_VALUE);
        }

        public long held() {
            return held;
        }
    }

    private final long maxBlocksPerWorker;
    private final Allowance allowance;
    private final Map<String, LinkedHashMap<Long, Boolean>> trees = new HashMap<>();

    /** @param maxBlocksPerWorker the most blocks remembered per worker (at least 1) */
    public RoutedPrefixTrees(long maxBlocksPerWorker) {
        this(maxBlocksPerWorker, Allowance.unbounded());
    }

    /** Trees whose blocks also count against {@code allowance}, shared with other trees. */
    public RoutedPrefixTrees(long maxBlocksPerWorker, Allowance allowance) {
        if (maxBlocksPerWorker < 1) {
            throw new IllegalArgumentException("a routed-prefix tree holds at least one block");
        }
        this.maxBlocksPerWorker = maxBlocksPerWorker;
        this.allowance = allowance;
    }

    /** Records that a prompt with these block hashes was routed to {@code workerId}. */
    public void insert(String workerId, long[] blockHashes) {
        LinkedHashMap<Long, Boolean> tree = trees.computeIfAbsent(workerId, w -> new LinkedHashMap<>(16, 0.75f, true));
        for (int i = blockHashes.length - 1; i >= 0; i--) {
            if (tree.put(blockHashes[i], Boolean.TRUE) == null) {
                allowance.held++;
            }
        }
        evictEldest(tree, tree.size() - maxBlocksPerWorker);
        while (allowance.held > allowance.maxBlocks) {
            LinkedHashMap<Long, Boolean> largest = largest();
            if (largest == null) {
                break; // the other trees hold the excess; they give it up when they grow
            }
            evictEldest(largest, Math.min(largest.size(), allowance.held - allowance.maxBlocks));
        }
    }

    private void evictEldest(LinkedHashMap<Long, Boolean> tree, long count) {
        var eldest = tree.keySet().iterator();
        for (long i = 0; i < count; i++) {
            eldest.next();
            eldest.remove();
            allowance.held--;
        }
    }

    private LinkedHashMap<Long, Boolean> largest() {
        LinkedHashMap<Long, Boolean> largest = null;
        for (LinkedHashMap<Long, Boolean> tree : trees.values()) {
            if (!tree.isEmpty() && (largest == null || tree.size() > largest.size())) {
                largest = tree;
            }
        }
        return largest;
    }

    /** Per worker routed at least the first block, how many leading blocks of the prompt it was routed. */
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
        LinkedHashMap<Long, Boolean> tree = trees.remove(workerId);
        if (tree != null) {
            allowance.held -= tree.size();
        }
    }

    /** Forgets every tree (its model is no longer served), giving their blocks back to the allowance. */
    public void clear() {
        List.copyOf(trees.keySet()).forEach(this::forgetWorker);
    }

    /** Workers with a tree. */
    public int workers() {
        return trees.size();
    }
}
