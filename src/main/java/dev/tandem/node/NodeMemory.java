package dev.tandem.node;

import dev.tandem.config.MemoryBudget;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.WorkerSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.KvBlockPool;
import dev.tandem.engine.KvLayout;

/** What a node's memory budget is made of: the plan's roles and the loaded model's sizes. */
final class NodeMemory {

    /**
     * Heap a kept KV block costs besides its floats: the array's header, and the cache's bookkeeping — a
     * tree node with the block's token ids, its hash-map and LRU entries and their boxed keys.
     */
    static final long BLOCK_OVERHEAD_BYTES = 16 + 160;

    private NodeMemory() {}

    static MemoryBudget plan(TandemConfig config, TandemNode.Plan plan, Engine engine, long maxHeapBytes) {
        WorkerSettings w = config.worker();
        KvLayout layout = engine.kvLayout();
        // A prompt in flight on a prefill worker: its KV, and the same again encoded for the wire.
        long longestPrompt = layout.blocksFor(engine.info().config().seqLen()) * layout.wireBlockBytes();
        long inFlight = 2L * w.prefillConcurrency() * longestPrompt;
        MemoryBudget.Shape shape = new MemoryBudget.Shape(
                plan.router(),
                plan.prefillWorkerIds().size(),
                plan.decodeWorkerIds().size(),
                !config.model().openai(),
                engine.residentBytes(),
                inFlight,
                w.prefixCacheBytes() != 0);
        return MemoryBudget.plan(config.memory(), maxHeapBytes, shape);
    }

    /**
     * The node's KV block pool, bounded by what its workers may hold together — their capacities once the
     * budget set them (a capacity configured below its share reserves no more than it, and a simulated
     * model's capacity counts its modelled bytes, so its stand-in blocks are few) — so recycling never keeps
     * more than that.
     */
    static KvBlockPool pool(MemoryBudget budget, WorkerSettings workers, KvLayout layout) {
        MemoryBudget.Shape s = budget.shape();
        if (!s.kvOnHeap()) {
            return new KvBlockPool(layout, 0);
        }
        long inFlightBlocks = budget.prefillInFlightBytes() / blockCost(layout).heapBytes();
        long blocks = s.decodeWorkers() * (workers.kvCapacityBytes() / layout.blockBytes())
                + s.prefillWorkers() * (workers.prefixCacheBytes() / layout.blockBytes() + inFlightBlocks);
        return new KvBlockPool(layout, blocks);
    }

    /**
     * Allocates the pool's blocks before the node serves ({@code memory.preallocate}), then collects once:
     * the collection moves them into the old generation together and sizes the heap for them now. Left to
     * traffic, the heap grew for minutes as the caches filled, and a full collection later resized it
     * (one soak: 600 MB more resident at once, and that minute's TTFT p99 at 530 ms). Blocking.
     */
    static void preallocate(KvBlockPool pool) {
        if (pool.fill() > 0) {
            System.gc();
        }
    }

    /** What one of the engine's KV blocks counts against a capacity, and what it takes on the heap. */
    static MemoryBudget.BlockCost blockCost(KvLayout layout) {
        return new MemoryBudget.BlockCost(
                layout.blockBytes(),
                layout.wireBlockBytes() + BLOCK_OVERHEAD_BYTES + (long) Integer.BYTES * layout.blockSize());
    }
}
