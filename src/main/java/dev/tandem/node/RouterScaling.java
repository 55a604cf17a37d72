package dev.tandem.node;

import dev.tandem.config.ScalingSettings;
import dev.tandem.metrics.ScalingGauges;
import dev.tandem.protocol.RouterLoad;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.router.scaling.ScalingAdvisor;
import dev.tandem.router.scaling.ScalingInputs;
import dev.tandem.router.scaling.ScalingRecommendation;
import dev.tandem.router.scaling.ScalingSnapshot;
import dev.tandem.router.scaling.TokenWindow;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A router's scaling signals, wired: the window its requests' tokens are counted in, and a periodic sample
 * that adds the other replicas' rates (from their load reports: a load balancer gives each replica a share of
 * the demand) to its own, joins them with the registry's loads, asks {@link ScalingAdvisor} per model and sets
 * the gauges. So every replica exports the same figures, up to when each sampled. A
 * sample reads local snapshots only (the registry's near copy, the window), a few microseconds per model, so
 * it runs on the router's loop, where the window is written.
 */
final class RouterScaling {
    private final ScalingSettings settings;
    private final Supplier<List<WorkerDescriptor>> workers;
    private final Supplier<List<RouterLoad>> others;
    private final TokenWindow tokens;
    private final ScalingGauges gauges;
    private volatile Map<String, RouterLoad.TokenRates> own = Map.of();

    /**
     * @param workers every registered worker (a snapshot per call)
     * @param others  the other live replicas' latest load reports
     */
    RouterScaling(
            ScalingSettings settings,
            Supplier<List<WorkerDescriptor>> workers,
            Supplier<List<RouterLoad>> others,
            MeterRegistry registry) {
        this.settings = settings;
        this.workers = workers;
        this.others = others;
        this.tokens = new TokenWindow(settings.windowSeconds() * 1_000_000_000L);
        this.gauges = new ScalingGauges(registry);
    }

    TokenWindow tokens() {
        return tokens;
    }

    /** Often enough that the gauges follow each slot of the window, at most once a second. */
    long periodMs() {
        return Math.max(100, Math.min(1000, settings.windowSeconds() * 1000L / 30));
    }

    /** This replica's own rates at its latest sample, for its load reports; any thread. */
    Map<String, RouterLoad.TokenRates> ownRates() {
        return own;
    }

    /** Recomputes every model's recommendation at {@code nanos}; on the router's loop. */
    Map<String, ScalingRecommendation> sample(long nanos) {
        Map<String, RouterLoad.TokenRates> mine = new HashMap<>();
        tokens.rates(nanos)
                .forEach((model, r) -> mine.put(
                        model, new RouterLoad.TokenRates(r.uncachedPromptTokensPerSec(), r.outputTokensPerSec())));
        own = Map.copyOf(mine);
        Map<String, TokenWindow.Rates> cluster = new HashMap<>();
        add(cluster, mine);
        for (RouterLoad other : others.get()) {
            add(cluster, other.tokenRates());
        }
        Map<String, ScalingRecommendation> out = new HashMap<>();
        Map<String, ScalingGauges.Values> values = new HashMap<>();
        for (ScalingSnapshot s : ScalingInputs.snapshots(workers.get(), cluster)) {
            ScalingRecommendation r = ScalingAdvisor.advise(s, settings);
            out.put(s.model(), r);
            values.put(s.model(), new ScalingGauges.Values(r.prefillWorkers(), r.decodeWorkers(), r.pdRatio()));
        }
        gauges.update(values);
        return out;
    }

    private static void add(Map<String, TokenWindow.Rates> sum, Map<String, RouterLoad.TokenRates> rates) {
        rates.forEach((model, r) -> sum.merge(
                model,
                new TokenWindow.Rates(r.uncachedPromptTokensPerSec(), r.outputTokensPerSec()),
                (a, b) -> new TokenWindow.Rates(
                        a.uncachedPromptTokensPerSec() + b.uncachedPromptTokensPerSec(),
                        a.outputTokensPerSec() + b.outputTokensPerSec())));
    }
}
