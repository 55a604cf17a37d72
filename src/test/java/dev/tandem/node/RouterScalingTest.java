package dev.tandem.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.config.ScalingSettings;
import dev.tandem.protocol.RouterLoad;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.router.scaling.ScalingRecommendation;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A router's scaling signals: its own window plus the other replicas' reported rates, joined with the
 * registry, make the gauges; a model whose workers left loses its gauges.
 */
class RouterScalingTest {
    private static final long S = 1_000_000_000L;
    /** Prefill at 100 % of 10k tok/s a worker; the rest as the defaults. */
    private static final ScalingSettings TARGETS = new ScalingSettings(1000, 1, 0.75, 0.8, 10, 1, 0);

    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final List<WorkerDescriptor> workers = new ArrayList<>(List.of(
            new WorkerDescriptor(
                    "p1",
                    WorkerRole.PREFILL,
                    "m",
                    1,
                    "n",
                    1,
                    false,
                    WorkerLoad.prefill(0, 0).withPrefillRate(10_000)),
            new WorkerDescriptor("d1", WorkerRole.DECODE, "m", 1, "n", 10, false, WorkerLoad.decode(25, 0, 1, 0))));
    private final List<RouterLoad> others = new ArrayList<>();
    private final RouterScaling scaling = new RouterScaling(TARGETS, () -> workers, () -> others, registry);

    private double gauge(String name, String role) {
        var search = registry.find(name).tag("model", "m");
        return (role == null ? search : search.tag("role", role)).gauge().value();
    }

    @Test
    void theOtherReplicasRatesAddToItsOwn() {
        for (int sec = 0; sec < 20; sec++) {
            scaling.tokens().arrived("m", 20_000, sec * S); // 20k tok/s here
        }
        long now = 19 * S + S / 2; // the window (9.5 s, 19.5 s] holds ten arrivals
        Map<String, ScalingRecommendation> alone = scaling.sample(now);
        assertEquals(2, alone.get("m").prefillWorkers());
        assertEquals(20_000, scaling.ownRates().get("m").uncachedPromptTokensPerSec(), 1e-6);
        // Two more replicas behind the same load balancer, each with its share.
        others.add(load("r2", 20_000));
        others.add(load("r3", 20_000));
        ScalingRecommendation all = scaling.sample(now).get("m");
        assertEquals(6, all.prefillWorkers());
        assertEquals(20_000, scaling.ownRates().get("m").uncachedPromptTokensPerSec(), 1e-6, "own only");
        // 25 sequences ÷ (10 × 0.75) = 3.33
        assertEquals(4, all.decodeWorkers());
        assertEquals(6, gauge("tandem.scaling.recommended.workers", "prefill"));
        assertEquals(4, gauge("tandem.scaling.recommended.workers", "decode"));
        assertEquals(1.5, gauge("tandem.scaling.pd.ratio", null));
    }

    @Test
    void aModelWithoutWorkersLosesItsGauges() {
        scaling.sample(0);
        assertEquals(
                3,
                registry.find("tandem.scaling.recommended.workers").gauges().size()
                        + registry.find("tandem.scaling.pd.ratio").gauges().size());
        workers.clear();
        scaling.sample(S);
        assertEquals(0, registry.getMeters().size(), registry.getMeters().toString());
    }

    private static RouterLoad load(String router, double promptRate) {
        return new RouterLoad(
                router, "n-" + router, 0, Map.of(), Map.of(), Map.of("m", new RouterLoad.TokenRates(promptRate, 0)));
    }
}
