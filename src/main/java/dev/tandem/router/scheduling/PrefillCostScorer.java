package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;

/**
 * The prompt tokens a worker would have to get through before this prompt's first token: what is
 * queued for prefill there plus the part of this prompt its cache does not hold, weighted by
 * {@link #UNCACHED_WEIGHT} (lower is better, scored 1 for the cheapest candidate and 0 for the dearest). Cache and load in one currency, the
 * way Dynamo's KV router weighs "blocks to prefill" against "active blocks": a worker holding the
 * prefix wins when its queue is shorter than (a multiple of) the compute the prefix saves — where separate
 * cache and queue scores, each on its own scale, let a long queue buy a small hit.
 */
public final class PrefillCostScorer extends LowerIsBetterScorer {
    /**
     * What one token of this prompt that must be computed counts against one queued token. Above 1:
     * recomputing a prefix another worker holds also takes capacity from every request after it, and the
     * queue counts whole prompts, cached parts included. 4 kept the most hits without hurting TTFT p99 of
     * the weights tried (1, 2, 4) on the Mooncake conversation trace (benchmarks.md, "What the benchmark changed in scheduling").
     */
    static final long UNCACHED_WEIGHT = 4;

    @Override
    public String name() {
        return "prefill-cost";
    }

    /** Queued prefill tokens plus the weighted uncached tokens of this prompt on {@code worker}. */
    static long cost(SchedulingRequest request, WorkerView worker) {
        return QueuedPrefillTokensScorer.queuedPrefillTokens(worker)
                + UNCACHED_WEIGHT * PrefillTime.uncachedTokens(request, worker);
    }

    @Override
    double value(SchedulingRequest request, WorkerView worker) {
        return cost(request, worker);
    }
}
