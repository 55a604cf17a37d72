package dev.tandem.router.scheduling;

import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerView;

/**
 * NVIDIA Dynamo's KV router cost, in KV blocks (lower is better): {@code overlap weight × the prefill
 * blocks the worker would have + the decode blocks it would have}. Scored like every lower-is-better
 * scorer: the cheapest candidate 1, the dearest 0, linearly between, all equal 1 — which is exactly the
 * (cost − min) ÷ (max − min) Dynamo's softmax sampling reads, so the {@code softmax} picker over this scorer
 * alone chooses as Dynamo does (ai-dynamo/dynamo, lib/llm/src/kv_router/scheduler.rs,
 * {@code DefaultWorkerSelector::select_worker}; benchmarks.md, "The dynamo and llm-d baselines").
 *
 * <ul>
 *   <li>prefill blocks: the prompt tokens queued for prefill on the worker (as {@code
 *       queued-prefill-tokens} reads them) plus this prompt's tokens its cache does not hold, ÷ the
 *       block size;
 *   <li>decode blocks: the blocks of the requests the worker holds — its KV in use ÷ the bytes of a block
 *       it announces ({@link CacheSpec#blockBytes()}; none when it announces none) plus its queued prefill
 *       tokens ÷ the block size — plus this prompt's full blocks its cache does not hold.
 * </ul>
 */
public final class KvBlockCostScorer extends LowerIsBetterScorer {
    /** Dynamo's {@code overlap_score_weight} default ({@code KvRouterConfig::default()}). */
    static final double OVERLAP_WEIGHT = 1.0;

    /** The block size of a worker that announces no cache: Tandem's {@code worker.kv-block-size} default. */
    static final int DEFAULT_BLOCK_SIZE = 16;

    @Override
    public String name() {
        return "kv-block-cost";
    }

    /** Dynamo's logit for {@code worker}: {@link #OVERLAP_WEIGHT} × prefill blocks + decode blocks. */
    static double cost(SchedulingRequest request, WorkerView worker) {
        CacheSpec cache = worker.worker().cache();
        int blockSize = cache == null ? DEFAULT_BLOCK_SIZE : cache.blockSize();
        long cachedBlocks = cache == null ? 0 : Math.max(0, request.cachedBlocks(worker.id()));
        long promptBlocks = request.promptTokens() / blockSize;
        long queued = QueuedPrefillTokensScorer.queuedPrefillTokens(worker);
        long uncachedTokens = Math.max(0, request.promptTokens() - cachedBlocks * blockSize);
        double prefillBlocks = (double) (queued + uncachedTokens) / blockSize;
        long blockBytes = cache == null ? 0 : cache.blockBytes();
        double activeBlocks = (blockBytes > 0 ? Math.ceil((double) worker.load().kvBytesUsed() / blockBytes) : 0)
                + (double) queued / blockSize;
        double newBlocks = Math.max(0, promptBlocks - cachedBlocks);
        return OVERLAP_WEIGHT * prefillBlocks + activeBlocks + newBlocks;
    }

    @Override
    double value(SchedulingRequest request, WorkerView worker) {
        return cost(request, worker);
    }
}
