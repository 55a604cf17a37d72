package dev.tandem.bench;

import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Each policy's figures as a ratio to the best baseline's in the same run: the hit rate and throughput to
 * the highest a baseline reached, TTFT and ITL to the lowest. A ratio of 1.00 ties the best baseline;
 * above 1 is more hits or tokens/s, or a longer wait. The baselines are the reference routers Tandem is
 * measured against ({@link #BASELINES}); a run without any prints nothing.
 */
final class BaselineRatios {
    /** Round robin, SGLang's cache-aware router, Dynamo's KV router and llm-d's scheduler, as modelled. */
    static final Set<String> BASELINES = Set.of("round-robin", "cache-aware", "dynamo", "llm-d");

    /** A figure of the summary, and whether more of it is better. */
    record Figure(String key, String label, boolean higherIsBetter) {}

    static final List<Figure> FIGURES = List.of(
            new Figure("hit_rate", "hit rate", true),
            new Figure("ttft_p50_ms", "TTFT p50", false),
            new Figure("ttft_p99_ms", "TTFT p99", false),
            new Figure("itl_p50_ms", "ITL p50", false),
            new Figure("itl_p99_ms", "ITL p99", false),
            new Figure("throughput_tokens_per_s", "tokens/s", true));

    private BaselineRatios() {}

    /** The best baseline's value of each figure (absent when no baseline has it). */
    static Map<String, Double> best(JsonObject policies) {
        Map<String, Double> best = new LinkedHashMap<>();
        for (Figure f : FIGURES) {
            for (String name : policies.fieldNames()) {
                Double v =
                        BASELINES.contains(name) ? policies.getJsonObject(name).getDouble(f.key()) : null;
                if (v == null || !Double.isFinite(v)) {
                    continue;
                }
                Double current = best.get(f.key());
                if (current == null || (f.higherIsBetter() ? v > current : v < current)) {
                    best.put(f.key(), v);
                }
            }
        }
        return best;
    }

    /** A policy's ratios to the best baselines, by figure (a figure with no value or no baseline is absent). */
    static Map<String, Double> of(JsonObject figures, Map<String, Double> best) {
        Map<String, Double> ratios = new LinkedHashMap<>();
        for (Figure f : FIGURES) {
            Double v = figures.getDouble(f.key());
            Double b = best.get(f.key());
            if (v != null && b != null && b != 0) {
                ratios.put(f.key(), v / b);
            }
        }
        return ratios;
    }

    /** The table printed after the run's; empty when the run had no baseline. */
    static String table(JsonObject summary) {
        JsonObject policies = summary.getJsonObject("policies");
        Map<String, Double> best = best(policies);
        if (best.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder("each figure / the best baseline's in this run (");
        sb.append(String.join(
                        ", ",
                        BASELINES.stream()
                                .filter(policies::containsKey)
                                .sorted()
                                .toList()))
                .append(")\n")
                .append(String.format(Locale.ROOT, "%-14s", "policy"));
        FIGURES.forEach(f -> sb.append(String.format(Locale.ROOT, " %9s", f.label())));
        sb.append('\n');
        for (String name : policies.fieldNames()) {
            Map<String, Double> ratios = of(policies.getJsonObject(name), best);
            sb.append(String.format(Locale.ROOT, "%-14s", name));
            for (Figure f : FIGURES) {
                Double r = ratios.get(f.key());
                sb.append(
                        r == null ? String.format(Locale.ROOT, " %9s", "-") : String.format(Locale.ROOT, " %9.2f", r));
            }
            sb.append('\n');
        }
        return sb.toString();
    }
}
