package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * The share of the prompt a worker's KV caches already hold: its cached leading blocks divided by the
 * prompt's full blocks (0 when the prompt has no full block, or nothing is known of caches). A worker
 * holding the prefix computes, or receives, only the rest, so prefill is shorter and less KV moves. The
 * counts come from the router's prefix index (see {@link SchedulingRequest#cachedBlocks()}); an absolute
 * share, not relative to the other candidates, so a 10% hit does not count as much as a full one.
 */
public final class PrefixOverlapScorer implements Scorer {
    @Override
    public String name() {
        return "prefix-overlap";
    }

    @Override
    public double score(SchedulingRequest request, WorkerView worker, List<WorkerView> candidates) {
        if (request.promptBlocks() <= 0) {
            return 0.0;
        }
        int cached = Math.max(0, Math.min(request.cachedBlocks(worker.id()), request.promptBlocks()));
        return (double) cached / request.promptBlocks();
    }
}
