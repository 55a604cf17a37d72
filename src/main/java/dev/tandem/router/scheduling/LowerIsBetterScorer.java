package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * Scores a quantity where less is better: the candidate with the least scores 1, the most 0, the rest
 * linearly between; all equal scores 1 for everyone (no opinion, so the picker's round-robin decides).
 */
abstract class LowerIsBetterScorer implements Scorer {

    /** The quantity of one worker. */
    abstract long value(WorkerView worker);

    @Override
    public final double score(SchedulingRequest request, WorkerView worker, List<WorkerView> candidates) {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (WorkerView w : candidates) {
            min = Math.min(min, value(w));
            max = Math.max(max, value(w));
        }
        if (max == min) {
            return 1.0;
        }
        return (double) (max - value(worker)) / (max - min);
    }
}
