package dev.tandem.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** A departed worker's decision counters leave the registry; the others, and the plugin timers, stay. */
class SchedulingMetricsTest {
    @Test
    void forgettingAWorkerRemovesOnlyItsDecisionCounters() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SchedulingMetrics metrics = new SchedulingMetrics(registry);
        metrics.chosen("decode", "w1");
        metrics.chosen("prefill", "w1");
        metrics.chosen("decode", "w2");
        metrics.chosen("decode", "w2");
        metrics.pluginTimed("decode", "max-score", 1_000);

        metrics.forget("w1");

        assertNull(
                registry.find("tandem.scheduling.decisions").tag("worker", "w1").counter());
        assertEquals(
                2.0,
                registry.get("tandem.scheduling.decisions")
                        .tag("worker", "w2")
                        .counter()
                        .count());
        assertEquals(1, registry.get("tandem.scheduling.plugin").timer().count());
        // A worker that comes back starts its series afresh.
        metrics.chosen("decode", "w1");
        assertEquals(
                1.0,
                registry.get("tandem.scheduling.decisions")
                        .tags("worker", "w1", "profile", "decode")
                        .counter()
                        .count());
    }
}
