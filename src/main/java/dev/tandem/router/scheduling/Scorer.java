package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/** Rates a worker in [0, 1] (higher is better) against the other candidates. Pure: no I/O, no state. */
public interface Scorer {
    String name();

    double score(SchedulingRequest request, WorkerView worker, List<WorkerView> candidates);

    /**
     * Every candidate's {@link #score}, in order. Scorers that rate against the others (min-max scaling)
     * override it to read each candidate once: a decision stays linear in the number of workers.
     */
    default double[] scores(SchedulingRequest request, List<WorkerView> candidates) {
        double[] out = new double[candidates.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = score(request, candidates.get(i), candidates);
        }
        return out;
    }
}
