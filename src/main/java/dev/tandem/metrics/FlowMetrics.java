package dev.tandem.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Flow control's meters, per tenant and priority: requests waiting in the router's queue, how long they
 * waited, admitted, rejected by reason, and tokens in and out. A tenant is a label, so their number is
 * bounded ({@code flow-control.max-tenant-labels}): tenants past it are counted as {@code other}, since
 * without API keys a header names them and a client could otherwise mint label values at will.
 */
public final class FlowMetrics {
    /** The label of the tenants past the bound. */
    public static final String OTHER = "other";

    private final MeterRegistry registry;
    private final int maxTenants;
    private final Set<String> named = ConcurrentHashMap.newKeySet();
    private final Map<String, AtomicInteger> queued = new ConcurrentHashMap<>();
    private final Map<String, Timer> waits = new ConcurrentHashMap<>();
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Counter quotaUnavailable;

    public FlowMetrics(MeterRegistry registry, int maxTenants) {
        this.registry = registry;
        this.maxTenants = maxTenants;
        this.quotaUnavailable = Counter.builder("tandem.flow.quota.unavailable")
                .description("quota checks that could not reach the cluster's counters (answered by "
                        + "flow-control.quota-partition)")
                .register(registry);
    }

    /** A request of this tenant and priority started or stopped waiting ({@code delta} +1 or -1). */
    public void queued(String tenant, int priority, int delta) {
        String t = label(tenant);
        queued.computeIfAbsent(t + "\0" + priority, k -> {
                    AtomicInteger n = new AtomicInteger();
                    Gauge.builder("tandem.flow.queued", n, AtomicInteger::get)
                            .description("requests waiting in the router's queue")
                            .tags("tenant", t, "priority", Integer.toString(priority))
                            .register(registry);
                    return n;
                })
                .addAndGet(delta);
    }

    /** A request left the queue for a worker after {@code nanos}. */
    public void waited(String tenant, int priority, long nanos) {
        String t = label(tenant);
        waits.computeIfAbsent(
                        t + "\0" + priority,
                        k -> Timer.builder("tandem.flow.queue.wait")
                                .description("time a request waited in the router's queue before it was dispatched")
                                .tags("tenant", t, "priority", Integer.toString(priority))
                                .serviceLevelObjectives(Buckets.STAGE)
                                .minimumExpectedValue(Buckets.STAGE[0])
                                .maximumExpectedValue(Buckets.STAGE[Buckets.STAGE.length - 1])
                                .register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    /** Passed flow control (quota and queue): it goes to the workers. */
    public void admitted(String tenant, int priority) {
        counter("tandem.flow.admitted", "requests flow control let through", tenant, priority, null, null)
                .increment();
    }

    /** Refused by flow control, {@code reason} the error code (rate_limit_exceeded, queue_full, ...). */
    public void rejected(String tenant, int priority, String reason) {
        counter("tandem.flow.rejected", "requests flow control refused, by reason", tenant, priority, "reason", reason)
                .increment();
    }

    /** Tokens served to a tenant: {@code in} prompt tokens, {@code out} generated ones. */
    public void tokens(String tenant, int priority, String direction, long n) {
        if (n > 0) {
            counter("tandem.flow.tokens", "tokens served per tenant", tenant, priority, "direction", direction)
                    .increment(n);
        }
    }

    public void quotaUnavailable() {
        quotaUnavailable.increment();
    }

    private Counter counter(String name, String description, String tenant, int priority, String key, String value) {
        String t = label(tenant);
        String id = name + "\0" + t + "\0" + priority + "\0" + value;
        return counters.computeIfAbsent(id, k -> {
            Counter.Builder b = Counter.builder(name)
                    .description(description)
                    .tags("tenant", t, "priority", Integer.toString(priority));
            return (key == null ? b : b.tag(key, value)).register(registry);
        });
    }

    private String label(String tenant) {
        if (named.contains(tenant)) {
            return tenant;
        }
        synchronized (named) {
            if (named.size() < maxTenants) {
                named.add(tenant);
                return tenant;
            }
        }
        return named.contains(tenant) ? tenant : OTHER;
    }
}
