package dev.tandem.config;

import java.util.List;

/**
 * The scheduling pipeline of one pool: filters by name (a filter that takes parameters carries them),
 * scorers by name and weight, and the picker that chooses among the candidates.
 */
public record SchedulerSettings(List<FilterSettings> filters, List<WeightedPlugin> scorers, PickerSettings picker) {

    public SchedulerSettings {
        filters = List.copyOf(filters);
        scorers = List.copyOf(scorers);
        if (picker instanceof PickerSettings.CacheAware && !scorers.isEmpty()) {
            throw new ConfigException("the cache-aware picker decides alone: it takes no scorers");
        }
    }

    /** The {@code max-score} picker. */
    public SchedulerSettings(List<FilterSettings> filters, List<WeightedPlugin> scorers) {
        this(filters, scorers, PickerSettings.MaxScore.INSTANCE);
    }

    /** Filters by name, each with its default parameters; the {@code max-score} picker. */
    public static SchedulerSettings of(List<String> filters, List<WeightedPlugin> scorers) {
        return new SchedulerSettings(filters.stream().map(FilterSettings::named).toList(), scorers);
    }

    /** A scorer plugin and its weight in the weighted sum. */
    public record WeightedPlugin(String plugin, double weight) {}

    /** A filter plugin as configured: its name, and its parameters if it takes any. */
    public sealed interface FilterSettings permits NamedFilter, LoadThreshold {
        String plugin();

        /** The filter of that name with its default parameters. */
        static FilterSettings named(String plugin) {
            return LoadThreshold.PLUGIN.equals(plugin) ? LoadThreshold.DEFAULTS : new NamedFilter(plugin);
        }
    }

    /** A filter that takes no parameters. */
    public record NamedFilter(String plugin) implements FilterSettings {}

    /**
     * The {@code load-threshold} filter's parameters: a worker with more queued prefill tokens, more active
     * sequences, or a larger share of its KV capacity in use than these is left out.
     *
     * @param maxQueuedPrefillTokens by default the workers' own {@code worker.max-queued-prefill-tokens}
     *                               default, beyond which a prefill worker answers busy anyway
     * @param maxActiveSequences     by default unlimited ({@link Long#MAX_VALUE})
     * @param maxKvUtilization       a share of the capacity the worker reports, 0 to 1 (a worker reporting
     *                               no capacity passes)
     */
    public record LoadThreshold(long maxQueuedPrefillTokens, long maxActiveSequences, double maxKvUtilization)
            implements FilterSettings {
        public static final String PLUGIN = "load-threshold";
        public static final LoadThreshold DEFAULTS = new LoadThreshold(65_536, Long.MAX_VALUE, 0.95);

        @Override
        public String plugin() {
            return PLUGIN;
        }

        static LoadThreshold read(ConfigSection s) {
            return new LoadThreshold(
                    s.integer("max-queued-prefill-tokens", DEFAULTS.maxQueuedPrefillTokens, 0, Long.MAX_VALUE),
                    s.integer("max-active-sequences", DEFAULTS.maxActiveSequences, 0, Long.MAX_VALUE),
                    s.decimal("max-kv-utilization", DEFAULTS.maxKvUtilization, 0, 1));
        }
    }

    /**
     * The section's profile; what it leaves out ({@code filters}, {@code scorers}, {@code picker}) is taken
     * from {@code defaults} (the policy's profile). A filter or the picker is a name or a mapping with
     * {@code plugin} and its parameters.
     */
    static SchedulerSettings read(ConfigSection s, SchedulerSettings defaults) {
        List<FilterSettings> filters = defaults.filters();
        if (s.has("filters")) {
            filters = s.namesOrSections("filters", "plugin").stream()
                    .map(SchedulerSettings::readFilter)
                    .toList();
        }
        List<WeightedPlugin> scorers = defaults.scorers();
        if (s.has("scorers")) {
            scorers = s.sections("scorers").stream()
                    .map(p -> {
                        WeightedPlugin wp = new WeightedPlugin(p.string("plugin", ""), p.integer("weight", 1, 0, 1000));
                        p.rejectUnknownKeys();
                        requirePlugin(p, wp.plugin());
                        return wp;
                    })
                    .toList();
        }
        PickerSettings picker = defaults.picker();
        ConfigSection p = s.nameOrSection("picker", "plugin");
        if (p != null) {
            picker = PickerSettings.read(p);
        }
        s.rejectUnknownKeys();
        if (picker instanceof PickerSettings.CacheAware && !scorers.isEmpty()) {
            throw new ConfigException("'" + s.key("scorers") + "' must be empty with the cache-aware picker ('"
                    + s.key("picker") + "'): it decides alone");
        }
        return new SchedulerSettings(filters, scorers, picker);
    }

    private static FilterSettings readFilter(ConfigSection f) {
        String plugin = f.string("plugin", "");
        FilterSettings filter = LoadThreshold.PLUGIN.equals(plugin) ? LoadThreshold.read(f) : new NamedFilter(plugin);
        f.rejectUnknownKeys(); // first: a misspelt 'plugin' is named as such
        requirePlugin(f, plugin);
        return filter;
    }

    private static void requirePlugin(ConfigSection s, String plugin) {
        if (plugin.isBlank()) {
            throw new ConfigException("'" + s.key("plugin") + "' is required: the plugin's name");
        }
    }
}
