package dev.tandem.router.scheduling;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One pool's pipeline: filters drop workers that cannot serve, weighted scorers rate the rest, the
 * picker chooses. Pure: the same snapshot and request always give the same choice.
 */
public final class SchedulingProfile {

  /** A scorer and its weight in the sum. */
  public record WeightedScorer(Scorer scorer, double weight) {
  }

  private final String name;
  private final List<Filter> filters;
  private final List<WeightedScorer> scorers;
  private final Picker picker;

  public SchedulingProfile(String name, List<Filter> filters, List<WeightedScorer> scorers, Picker picker) {
    this.name = name;
    this.filters = List.copyOf(filters);
    this.scorers = List.copyOf(scorers);
    this.picker = picker;
  }

  public String name() {
    return name;
  }

  /** The chosen worker, or empty when no worker passes the filters. */
  public Optional<WorkerView> choose(SchedulingRequest request, List<WorkerView> workers) {
    List<WorkerView> candidates = new ArrayList<>(workers.size());
    for (WorkerView w : workers) {
      if (filters.stream().allMatch(f -> f.admits(request, w))) {
        candidates.add(w);
      }
    }
    if (candidates.isEmpty()) {
      return Optional.empty();
    }
    List<Picker.ScoredWorker> scored = new ArrayList<>(candidates.size());
    for (WorkerView w : candidates) {
      double total = 0;
      for (WeightedScorer s : scorers) {
        total += s.weight() * s.scorer().score(request, w, candidates);
      }
      scored.add(new Picker.ScoredWorker(w, total));
    }
    return Optional.of(picker.pick(request, scored));
  }
}
