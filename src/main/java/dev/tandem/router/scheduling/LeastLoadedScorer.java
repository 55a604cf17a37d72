package dev.tandem.router.scheduling;

import java.util.List;

/**
 * The seed's prefill policy: the worker with the fewest requests in flight scores 1, the busiest 0,
 * the rest linearly between.
 */
public final class LeastLoadedScorer implements Scorer {
  @Override
  public String name() {
    return "least-loaded";
  }

  @Override
  public double score(SchedulingRequest request, WorkerView worker, List<WorkerView> candidates) {
    int min = Integer.MAX_VALUE;
    int max = Integer.MIN_VALUE;
    for (WorkerView w : candidates) {
      min = Math.min(min, w.inFlight());
      max = Math.max(max, w.inFlight());
    }
    if (max == min) {
      return 1.0;
    }
    return (double) (max - worker.inFlight()) / (max - min);
  }
}
