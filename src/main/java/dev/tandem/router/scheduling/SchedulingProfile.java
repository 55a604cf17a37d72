package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One pool's pipeline: stateful plugins add what they remember to the request, filters drop workers
 * that cannot serve, weighted scorers rate the rest, the picker chooses. Pure but for the stateful
 * plugins: the same snapshot, request and plugin state always give the same choice, and the state changes
 * only when a choice is taken ({@link #onPicked}).
 */
public final class SchedulingProfile {

    /** A scorer and its weight in the sum. */
    public record WeightedScorer(Scorer scorer, double weight) {}

    private final String name;
    private final List<Filter> filters;
    private final List<WeightedScorer> scorers;
    private final Picker picker;
    private final List<StatefulPlugin> stateful;

    public SchedulingProfile(String name, List<Filter> filters, List<WeightedScorer> scorers, Picker picker) {
        this(name, List.of(), filters, scorers, picker);
    }

    public SchedulingProfile(
            String name,
            List<StatefulPlugin> stateful,
            List<Filter> filters,
            List<WeightedScorer> scorers,
            Picker picker) {
        this.name = name;
        this.stateful = List.copyOf(stateful);
        this.filters = List.copyOf(filters);
        this.scorers = List.copyOf(scorers);
        this.picker = picker;
    }

    /** This profile's stateful plugin of {@code type}, if it has one. */
    public <T extends StatefulPlugin> Optional<T> stateful(Class<T> type) {
        return stateful.stream().filter(type::isInstance).map(type::cast).findFirst();
    }

    /** {@code choice}, picked for {@code request}, was taken: the stateful plugins learn it. */
    public void onPicked(SchedulingRequest request, WorkerView choice) {
        stateful.forEach(s -> s.onPicked(request, choice));
    }

    /** A worker left the registry: the stateful plugins forget it. */
    public void forgetWorker(String workerId) {
        stateful.forEach(s -> s.forgetWorker(workerId));
    }

    /** The profile is dropped: the stateful plugins give back what they hold. */
    public void close() {
        stateful.forEach(StatefulPlugin::close);
    }

    public String name() {
        return name;
    }

    /** The chosen worker, or empty when no worker passes the filters. */
    public Optional<WorkerView> choose(SchedulingRequest request, List<WorkerView> workers) {
        return choose(request, workers, SchedulingObserver.NONE);
    }

    /** The same choice, with each plugin's time and the result reported to {@code observer}. */
    public Optional<WorkerView> choose(
            SchedulingRequest request, List<WorkerView> workers, SchedulingObserver observer) {
        for (StatefulPlugin s : stateful) {
            long start = System.nanoTime();
            request = s.prepare(request, workers);
            observer.pluginTimed(name, s.name(), System.nanoTime() - start);
        }
        List<WorkerView> candidates = workers;
        for (Filter f : filters) {
            long start = System.nanoTime();
            candidates = f.filter(request, candidates);
            observer.pluginTimed(name, f.name(), System.nanoTime() - start);
        }
        if (candidates.isEmpty()) {
            return Optional.empty();
        }
        double[] totals = new double[candidates.size()];
        for (WeightedScorer s : scorers) {
            long start = System.nanoTime();
            double[] scores = s.scorer().scores(request, candidates);
            for (int i = 0; i < totals.length; i++) {
                totals[i] += s.weight() * scores[i];
            }
            observer.pluginTimed(name, s.scorer().name(), System.nanoTime() - start);
        }
        List<Picker.ScoredWorker> scored = new ArrayList<>(candidates.size());
        for (int i = 0; i < totals.length; i++) {
            scored.add(new Picker.ScoredWorker(candidates.get(i), totals[i]));
        }
        long start = System.nanoTime();
        WorkerView chosen = picker.pick(request, scored);
        observer.pluginTimed(name, picker.name(), System.nanoTime() - start);
        observer.chosen(name, chosen.id());
        return Optional.of(chosen);
    }
}
