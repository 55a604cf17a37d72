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
 * without API keys a header names them and a client could otherwise mint label values at will. A request
 * looks its tenant's meters up once ({@link #of}); counting a token batch is then a plain increment.
 */
public final class FlowMetrics {
    /** The label of the tenants past the bound. */
    public static final String OTHER = "other";

    private final MeterRegistry registry;
    private final int maxTenants;
    private final Set<String> named = ConcurrentHashMap.newKeySet();
    private final Map<String, Tenant> tenants = new ConcurrentHashMap<>();
    private final Counter quotaUnavailable;

    public FlowMetrics(MeterRegistry registry, int maxTenants) {
        this.registry = registry;
        this.maxTenants = maxTenants;
        this.quotaUnavailable = Counter.builder("tandem.flow.quota.unavailable")
                .description("quota checks that could not reach the cluster's counters (answered by "
                        + "flow-control.quota-partition)")
                .register(registry);
    }

    /** The meters of a tenant and priority (the tenant as {@link #OTHER} once the bound is reached). */
    public Tenant of(String tenant, int priority) {
        String label = label(tenant);
        return tenants.computeIfAbsent(label + "\0" + priority, k -> new Tenant(label, priority));
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

    public void quotaUnavailable() {
        quotaUnavailable.increment();
    }

    /** One tenant's and priority's meters. */
    public final class Tenant {
        private final String label;
        private final String priority;
        private final AtomicInteger queued = new AtomicInteger();
        private final Timer waits;
        private final Counter admitted;
        private final Counter tokensIn;
        private final Counter tokensOut;
        private final Map<String, Counter> rejected = new ConcurrentHashMap<>();

        private Tenant(String label, int priority) {
            this.label = label;
            this.priority = Integer.toString(priority);
            Gauge.builder("tandem.flow.queued", queued, AtomicInteger::get)
                    .description("requests waiting in the router's queue")
                    .tags("tenant", label, "priority", this.priority)
                    .register(registry);
            waits = Timer.builder("tandem.flow.queue.wait")
                    .description("time a request waited in the router's queue before it was dispatched")
                    .tags("tenant", label, "priority", this.priority)
                    .serviceLevelObjectives(Buckets.STAGE)
                    .minimumExpectedValue(Buckets.STAGE[0])
                    .maximumExpectedValue(Buckets.STAGE[Buckets.STAGE.length - 1])
                    .register(registry);
            admitted = counter("tandem.flow.admitted", "requests flow control let through", null, null);
            tokensIn = counter("tandem.flow.tokens", "tokens served per tenant", "direction", "in");
            tokensOut = counter("tandem.flow.tokens", "tokens served per tenant", "direction", "out");
        }

        /** A request started ({@code +1}) or stopped ({@code -1}) waiting. */
        public void queued(int delta) {
            queued.addAndGet(delta);
        }

        /** A request left the queue for a worker after {@code nanos}. */
        public void waited(long nanos) {
            waits.record(nanos, TimeUnit.NANOSECONDS);
        }

        /** Passed flow control (quota and queue): it goes to the workers. */
        public void admitted() {
            admitted.increment();
        }

        /** Refused by flow control, {@code reason} the error code (rate_limit_exceeded, queue_full, ...). */
        public void rejected(String reason) {
            rejected.computeIfAbsent(
                            reason,
                            r -> counter(
                                    "tandem.flow.rejected", "requests flow control refused, by reason", "reason", r))
                    .increment();
        }

        /** Prompt tokens dispatched for the tenant. */
        public void tokensIn(long n) {
            tokensIn.increment(n);
        }

        /** Generated tokens streamed to the tenant. */
        public void tokensOut(long n) {
            tokensOut.increment(n);
        }

        private Counter counter(String name, String description, String key, String value) {
            Counter.Builder b =
                    Counter.builder(name).description(description).tags("tenant", label, "priority", priority);
            return (key == null ? b : b.tag(key, value)).register(registry);
        }
    }
}
