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

    /**
     * Every candidate's quantity, in order. A scorer whose quantity depends on the whole pool (a fallback
     * taken from the others) overrides this and computes what the pool gives once.
     */
    double[] values(SchedulingRequest request, List<WorkerView> candidates) {
        double[] values = new double[candidates.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = value(request, candidates.get(i));
        }
        return values;
    }

    @Override
    public final double score(SchedulingRequest request, WorkerView worker, List<WorkerView> candidates) {
        int i = candidates.indexOf(worker);
        if (i >= 0) {
            return scores(request, candidates)[i];
        }
        double[] values = values(request, candidates);
        double own = value(request, worker);
        double min = own;
        double max = own;
        for (double v : values) {
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        return max == min ? 1.0 : (max - own) / (max - min);
    }

    /** The same scores with each candidate's quantity computed once (the default would be quadratic). */
    @Override
    public final double[] scores(SchedulingRequest request, List<WorkerView> candidates) {
        double[] values = values(request, candidates);
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (double v : values) {
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        double[] out = new double[values.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = max == min ? 1.0 : (max - values[i]) / (max - min);
        }
        return out;
    }
}
