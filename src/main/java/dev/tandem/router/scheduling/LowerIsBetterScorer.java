package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * Scores a quantity where less is better: the candidate with the least scores 1, the most 0, the rest
 * linearly between; all equal scores 1 for everyone (no opinion, so the picker's round-robin decides).
 */
abstract class LowerIsBetterScorer implements Scorer {

    /** The quantity of one worker, for this request (whole numbers stay exact up to 2^53). */
    abstract double value(SchedulingRequest request, WorkerView worker);

    @Override
    public final double score(SchedulingRequest request, WorkerView worker, List<WorkerView> candidates) {
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (WorkerView w : candidates) {
            double v = value(request, w);
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        if (max == min) {
            return 1.0;
        }
        return (max - value(request, worker)) / (max - min);
    }

    /** The same scores with each candidate's quantity computed once (the default would be quadratic). */
    @Override
    public final double[] scores(SchedulingRequest request, List<WorkerView> candidates) {
        int n = candidates.size();
        double[] values = new double[n];
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            values[i] = value(request, candidates.get(i));
            min = Math.min(min, values[i]);
            max = Math.max(max, values[i]);
        }
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = max == min ? 1.0 : (max - values[i]) / (max - min);
        }
        return out;
    }
}
