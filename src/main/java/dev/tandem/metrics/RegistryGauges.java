package dev.tandem.metrics;

import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Every registered worker's heartbeat load as gauges on a router — the cluster's state from the
 * router's own registry snapshot, so one scrape of any router shows every worker. Gauges come and go
 * with the workers (label cardinality = workers).
 */
public final class RegistryGauges {
    private final MeterRegistry registry;
    private final Supplier<List<WorkerDescriptor>> workers;
    private final Function<String, WorkerDescriptor> worker;
    private final Map<String, List<Meter>> meters = new ConcurrentHashMap<>();

    /**
     * @param workers every registered worker (a snapshot per call)
     * @param worker  one registered worker by id, or null when it is gone
     */
    public RegistryGauges(
            MeterRegistry registry,
            Supplier<List<WorkerDescriptor>> workers,
            Function<String, WorkerDescriptor> worker) {
        this.registry = registry;
        this.workers = workers;
        this.worker = worker;
    }

    /** Registers the gauges of workers not seen before and removes those of workers gone. */
    public void refresh() {
        for (WorkerDescriptor w : workers.get()) {
            meters.computeIfAbsent(w.workerId(), id -> register(id, w.role().wireName()));
        }
        for (String id : List.copyOf(meters.keySet())) {
            if (worker.apply(id) == null) {
                meters.remove(id).forEach(registry::remove);
            }
        }
    }

    private List<Meter> register(String id, String role) {
        return List.of(
                gauge(
                        "tandem.worker.queued.prefill.tokens",
                        "prompt tokens queued or in prefill",
                        id,
                        role,
                        l -> l.queuedPrefillTokens()),
                gauge(
                        "tandem.worker.active.sequences",
                        "sequences in or waiting for the decode batch",
                        id,
                        role,
                        l -> l.activeSequences()),
                gauge("tandem.worker.kv.used.bytes", "KV memory held (batch + parked)", id, role, l -> l.kvBytesUsed()),
                gauge(
                        "tandem.worker.kv.capacity.bytes",
                        "KV memory the worker may hold",
                        id,
                        role,
                        l -> l.kvBytesCapacity()),
                gauge("tandem.worker.draining", "1 while the worker drains", id, role, null));
    }

    private Meter gauge(String name, String description, String id, String role, ToDoubleFunction<WorkerLoad> value) {
        return Gauge.builder(name, worker, lookup -> {
                    WorkerDescriptor w = lookup.apply(id);
                    if (w == null) {
                        return Double.NaN;
                    }
                    return value == null ? (w.draining() ? 1 : 0) : value.applyAsDouble(w.load());
                })
                .tag("worker", id)
                .tag("role", role)
                .description(description)
                .register(registry);
    }
}
