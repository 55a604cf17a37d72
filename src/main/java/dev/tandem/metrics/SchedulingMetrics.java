package dev.tandem.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What scheduling costs and decides: a timer per (profile, plugin) and a counter per (profile,
 * worker) choice. Both label sets are bounded by configuration and the worker count.
 */
public final class SchedulingMetrics {
    private final MeterRegistry registry;
    // Looked up on every request: cached instead of rebuilt through the registry each time.
    // By profile, then plugin: no key is built per call.
    private final Map<String, Map<String, Timer>> timers = new ConcurrentHashMap<>();
    private final Map<String, Counter> decisions = new ConcurrentHashMap<>();

    public SchedulingMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    public void pluginTimed(String profile, String plugin, long nanos) {
        timers.computeIfAbsent(profile, k -> new ConcurrentHashMap<>())
                .computeIfAbsent(
                        plugin,
                        k -> Timer.builder("tandem.scheduling.plugin")
                                .tag("profile", profile)
                                .tag("plugin", plugin)
                                .description("time one scheduling plugin took for one request")
                                .register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    /** A worker left: its decision counters go (worker ids churn with pods; the series must not grow forever). */
    public void forget(String workerId) {
        decisions.entrySet().removeIf(e -> {
            boolean gone = e.getValue().getId().getTag("worker").equals(workerId);
            if (gone) {
                registry.remove(e.getValue());
            }
            return gone;
        });
    }

    public void chosen(String profile, String workerId) {
        decisions
                .computeIfAbsent(
                        profile + '/' + workerId,
                        k -> Counter.builder("tandem.scheduling.decisions")
                                .tag("profile", profile)
                                .tag("worker", workerId)
                                .description("workers chosen, by profile")
                                .register(registry))
                .increment();
    }
}
