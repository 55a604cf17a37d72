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
        double[] values = values(request, candidates);
        int i = candidates.indexOf(worker);
        double[] range = range(values);
        return scaled(i >= 0 ? values[i] : value(request, worker), range);
    }

    /** The same scores with each candidate's quantity computed once (the default would be quadratic). */
    @Override
    public final double[] scores(SchedulingRequest request, List<WorkerView> candidates) {
        double[] values = values(request, candidates);
        double[] range = range(values);
        double[] out = new double[values.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = scaled(values[i], range);
        }
        return out;
    }

    /** The least and the most of {@code values}. */
    private static double[] range(double[] values) {
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (double x : values) {
            min = Math.min(min, x);
            max = Math.max(max, x);
        }
        return new double[] {min, max};
    }

    /** {@code v} between the least (1) and the most (0) of {@code range}; 1 when those are equal. */
    private static double scaled(double v, double[] range) {
        return range[1] == range[0] ? 1.0 : (range[1] - v) / (range[1] - range[0]);
    }
}
