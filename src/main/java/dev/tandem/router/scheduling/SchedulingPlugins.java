package dev.tandem.router.scheduling;

import dev.tandem.config.ConfigException;
import dev.tandem.config.PickerSettings;
import dev.tandem.config.SchedulerSettings;
import dev.tandem.config.SchedulerSettings.FilterSettings;
import dev.tandem.config.SchedulerSettings.LoadThreshold;
import dev.tandem.config.SchedulingPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Plugins by the names configuration uses; builds a profile from its settings: filters, scorers and the
 * picker ({@code max-score}, {@code cache-aware} or {@code softmax}). Every profile starts with
 * the filters correctness needs — {@code not-failed} and {@code model-match} — whether configured or not.
 */
public final class SchedulingPlugins {
    private static final List<FilterSettings> REQUIRED_FILTERS =
            List.of(FilterSettings.named("not-failed"), FilterSettings.named("model-match"));
    private static final Map<String, Supplier<Filter>> FILTERS = Map.of(
            "not-failed",
            NotFailedFilter::new,
            "model-match",
            ModelMatchFilter::new,
            "not-draining",
            NotDrainingFilter::new,
            LoadThreshold.PLUGIN,
            () -> new LoadThresholdFilter(LoadThreshold.DEFAULTS));
    private static final Map<String, Supplier<Scorer>> SCORERS = Map.of(
            "least-loaded", LeastLoadedScorer::new,
            "queued-prefill-tokens", QueuedPrefillTokensScorer::new,
            "active-sequences", ActiveSequencesScorer::new,
            "kv-utilization", KvUtilizationScorer::new,
            "session-affinity", SessionAffinityScorer::new,
            "prefix-overlap", PrefixOverlapScorer::new,
            "prefill-cost", PrefillCostScorer::new,
            "predicted-ttft", PredictedTtftScorer::new,
            "kv-block-cost", KvBlockCostScorer::new);

    private SchedulingPlugins() {}

    /** A profile over the prefix index (or over no prefixes): no stateful plugin. */
    public static SchedulingProfile profile(String name, SchedulerSettings settings) {
        return profile(name, settings, SchedulingPolicy.PrefixSource.INDEX, RoutedPrefixTrees.Allowance.unbounded());
    }

    /**
     * A profile whose prefixes come from {@code prefixes}: under {@link SchedulingPolicy.PrefixSource#ROUTED
     * routed} prefixes ({@code cache-aware}) it remembers what it routed where ({@link RoutedPrefixes}), in
     * trees bounded by the {@code cache-aware} picker's {@code max-tree-blocks} and by {@code trees}, shared
     * with the router's other trees.
     */
    public static SchedulingProfile profile(
            String name,
            SchedulerSettings settings,
            SchedulingPolicy.PrefixSource prefixes,
            RoutedPrefixTrees.Allowance trees) {
        List<StatefulPlugin> stateful = prefixes == SchedulingPolicy.PrefixSource.ROUTED
                ? List.of(new RoutedPrefixes(new RoutedPrefixTrees(maxTreeBlocks(settings), trees)))
                : List.of();
        List<FilterSettings> filterSettings = new ArrayList<>(REQUIRED_FILTERS);
        settings.filters().stream().filter(f -> !filterSettings.contains(f)).forEach(filterSettings::add);
        List<Filter> filters = filterSettings.stream().map(f -> filter(name, f)).toList();
        List<SchedulingProfile.WeightedScorer> scorers = settings.scorers().stream()
                .map(p -> {
                    Supplier<Scorer> s = SCORERS.get(p.plugin());
                    if (s == null) {
                        throw new ConfigException("unknown scorer '" + p.plugin() + "' in " + name
                                + " scheduling; known: " + SCORERS.keySet());
                    }
                    return new SchedulingProfile.WeightedScorer(s.get(), p.weight());
                })
                .toList();
        return new SchedulingProfile(name, stateful, filters, scorers, picker(settings.picker()));
    }

    private static long maxTreeBlocks(SchedulerSettings pool) {
        return pool.picker() instanceof PickerSettings.CacheAware c
                ? c.maxTreeBlocks()
                : PickerSettings.CacheAware.DEFAULTS.maxTreeBlocks();
    }

    private static Picker picker(PickerSettings settings) {
        if (settings instanceof PickerSettings.CacheAware cacheAware) {
            return new CacheAwarePicker(cacheAware);
        }
        if (settings instanceof PickerSettings.Softmax softmax) {
            return new SoftmaxPicker(softmax);
        }
        return new MaxScorePicker();
    }

    private static Filter filter(String profile, FilterSettings settings) {
        if (settings instanceof LoadThreshold threshold) {
            return new LoadThresholdFilter(threshold);
        }
        Supplier<Filter> s = FILTERS.get(settings.plugin());
        if (s == null) {
            throw new ConfigException("unknown filter '" + settings.plugin() + "' in " + profile
                    + " scheduling; known: " + FILTERS.keySet());
        }
        return s.get();
    }
}
