package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * Scores a quantity where less is better: the candidate with the least scores 1, the most 0, the rest
 * linearly between; all equal scores 1 for everyone (no opinion, so the picker's round-robin decides).
 */
abstract class LowerIsBetterScorer implements Scorer {

    /** The quantity of one worker, for this request. */
    abstract long value(SchedulingRequest request, WorkerView worker);

    @Override
    public final double score(SchedulingRequest request, WorkerView worker, List<WorkerView> candidates) {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (WorkerView w : candidates) {
            long v = value(request, w);
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        if (max == min) {
            return 1.0;
        }
        return (double) (max - value(request, worker)) / (max - min);
    }
}
