package dev.tandem.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * What scheduling costs and decides: a timer per (profile, plugin) and a counter per (profile,
 * worker) choice. Both label sets are bounded by configuration and the worker count.
 */
public final class SchedulingMetrics {
    private final MeterRegistry registry;
    // Looked up on every request: cached by profile, then plugin or worker, so no key is built per call.
    private final Map<String, Map<String, Timer>> timers = new ConcurrentHashMap<>();
    private final Map<String, Map<String, Counter>> decisions = new ConcurrentHashMap<>();

    public SchedulingMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    private static <M> M meter(Map<String, Map<String, M>> meters, String profile, String key, Supplier<M> create) {
        return meters.computeIfAbsent(profile, p -> new ConcurrentHashMap<>()).computeIfAbsent(key, k -> create.get());
    }

    public void pluginTimed(String profile, String plugin, long nanos) {
        meter(
                        timers,
                        profile,
                        plugin,
                        () -> Timer.builder("tandem.scheduling.plugin")
                                .tag("profile", profile)
                                .tag("plugin", plugin)
                                .description("time one scheduling plugin took for one request")
                                .register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    /** A worker left: its decision counters go (worker ids churn with pods; the series must not grow forever). */
    public void forget(String workerId) {
        for (Map<String, Counter> byWorker : decisions.values()) {
            Counter gone = byWorker.remove(workerId);
            if (gone != null) {
                registry.remove(gone);
            }
        }
    }

    public void chosen(String profile, String workerId) {
        meter(
                        decisions,
                        profile,
                        workerId,
                        () -> Counter.builder("tandem.scheduling.decisions")
                                .tag("profile", profile)
                                .tag("worker", workerId)
                                .description("workers chosen, by profile")
                                .register(registry))
                .increment();
    }
}
