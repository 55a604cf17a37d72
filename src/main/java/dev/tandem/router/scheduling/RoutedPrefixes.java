package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code cache-aware} policy's memory (SGLang's router): one pool's {@link RoutedPrefixTrees}. Before
 * a choice it tells the profile what this router routed where — per worker, the prompt's leading blocks
 * it routed there ({@link SchedulingRequest#cachedBlocks}) and its tree's size
 * ({@link SchedulingRequest#routedBlocks}), which the {@code cache-aware} picker reads; after the choice
 * the prompt joins the chosen worker's tree.
 */
public final class RoutedPrefixes implements StatefulPlugin {
    public static final String NAME = "routed-prefixes";

    private final RoutedPrefixTrees trees;

    public RoutedPrefixes(RoutedPrefixTrees trees) {
        this.trees = trees;
    }

    @Override
    public String name() {
        return NAME;
    }

    /** The trees (tests, inspection). */
    public RoutedPrefixTrees trees() {
        return trees;
    }

    @Override
    public SchedulingRequest prepare(SchedulingRequest request, List<WorkerView> workers) {
        Map<String, Integer> routed = new HashMap<>();
        // Workers of one model share the prompt's hashes: one walk of the trees per model.
        Map<long[], Map<String, Integer>> byHashes = new IdentityHashMap<>();
        for (WorkerView w : workers) {
            long[] blocks = request.hashes().blocksFor(w);
            if (blocks.length == 0) {
                continue;
            }
            Integer n = byHashes.computeIfAbsent(blocks, trees::leadingBlocks).get(w.id());
            if (n != null) {
                routed.put(w.id(), n);
            }
        }
        return request.withRoutedPrefixes(routed, trees.sizes());
    }

    @Override
    public void onPicked(SchedulingRequest request, WorkerView choice) {
        // SGLang inserts the request into the chosen worker's tree, in each pool.
        trees.insert(choice.id(), request.hashes().blocksFor(choice));
    }

    @Override
    public void forgetWorker(String workerId) {
        trees.forgetWorker(workerId);
    }

    @Override
    public void close() {
        trees.clear();
    }
}
