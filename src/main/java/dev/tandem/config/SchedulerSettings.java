package dev.tandem.config;

import java.util.List;

/**
 * The scheduling pipeline of one pool: filters by name, scorers by name and weight.
 */
public record SchedulerSettings(List<String> filters, List<WeightedPlugin> scorers) {

    /** A scorer plugin and its weight in the weighted sum. */
    public record WeightedPlugin(String plugin, double weight) {}

    static SchedulerSettings read(ConfigSection s, List<String> defaultFilters, List<WeightedPlugin> defaultScorers) {
        List<String> filters = s.has("filters") ? s.strings("filters") : defaultFilters;
        List<WeightedPlugin> scorers = defaultScorers;
        if (s.has("scorers")) {
            scorers = s.sections("scorers").stream()
                    .map(p -> {
                        WeightedPlugin wp = new WeightedPlugin(p.string("plugin", ""), p.integer("weight", 1, 0, 1000));
                        p.rejectUnknownKeys();
                        if (wp.plugin().isBlank()) {
                            throw new ConfigException("every scorer needs a 'plugin' name");
                        }
                        return wp;
                    })
                    .toList();
        }
        s.rejectUnknownKeys();
        return new SchedulerSettings(List.copyOf(filters), List.copyOf(scorers));
    }
}
