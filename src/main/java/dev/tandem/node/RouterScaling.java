package dev.tandem.node;

import dev.tandem.config.ScalingSettings;
import dev.tandem.metrics.ScalingGauges;
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
 * that joins it with the registry's loads, asks {@link ScalingAdvisor} per model and sets the gauges. A
 * sample reads local snapshots only (the registry's near copy, the window), a few microseconds per model, so
 * it runs on the router's loop, where the window is written.
 */
final class RouterScaling {
    private final ScalingSettings settings;
    private final Supplier<List<WorkerDescriptor>> workers;
    private final TokenWindow tokens;
    private final ScalingGauges gauges;

    RouterScaling(ScalingSettings settings, Supplier<List<WorkerDescriptor>> workers, MeterRegistry registry) {
        this.settings = settings;
        this.workers = workers;
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

    /** Recomputes every model's recommendation at {@code nanos}; on the router's loop. */
    Map<String, ScalingRecommendation> sample(long nanos) {
        Map<String, ScalingRecommendation> out = new HashMap<>();
        Map<String, ScalingGauges.Values> values = new HashMap<>();
        for (ScalingSnapshot s : ScalingInputs.snapshots(workers.get(), tokens.rates(nanos))) {
            ScalingRecommendation r = ScalingAdvisor.advise(s, settings);
            out.put(s.model(), r);
            values.put(s.model(), new ScalingGauges.Values(r.prefillWorkers(), r.decodeWorkers(), r.pdRatio()));
        }
        gauges.update(values);
        return out;
    }
}
