package dev.tandem.metrics;

import dev.tandem.router.scheduling.SchedulingObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;

/**
 * What scheduling costs and decides: a timer per (profile, plugin) and a counter per (profile,
 * worker) choice. Both label sets are bounded by configuration and the worker count.
 */
public final class SchedulingMetrics implements SchedulingObserver {
  private final MeterRegistry registry;

  public SchedulingMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  public void pluginTimed(String profile, String plugin, long nanos) {
    Timer.builder("tandem.scheduling.plugin").tag("profile", profile).tag("plugin", plugin)
        .description("time one scheduling plugin took for one request").register(registry)
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void chosen(String profile, String workerId) {
    Counter.builder("tandem.scheduling.decisions").tag("profile", profile).tag("worker", workerId)
        .description("workers chosen, by profile").register(registry).increment();
  }
}
