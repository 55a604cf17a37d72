package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.ArrayList;
import java.util.List;

/**
 * Picks the best score; ties — including "no scorer has an opinion" — go round-robin by the request's
 * tick over the tied workers in id order, which is the seed's round-robin fallback.
 */
public final class MaxScorePicker implements Picker {
    private static final double EPSILON = 1e-9;

    @Override
    public String name() {
        return "max-score";
    }

    @Override
    public WorkerView pick(SchedulingRequest request, List<ScoredWorker> scored) {
        double best = Double.NEGATIVE_INFINITY;
        for (ScoredWorker s : scored) {
            best = Math.max(best, s.score());
        }
        List<WorkerView> tied = new ArrayList<>();
        for (ScoredWorker s : scored) {
            if (s.score() >= best - EPSILON) {
                tied.add(s.worker());
            }
        }
        tied.sort(java.util.Comparator.comparing(WorkerView::id));
        return tied.get((int) Math.floorMod(request.tick(), (long) tied.size()));
    }
}
