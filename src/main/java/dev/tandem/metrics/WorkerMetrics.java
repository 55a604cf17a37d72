package dev.tandem.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;

/** A worker's meters, tagged with its id (a handful per node: bounded). */
public final class WorkerMetrics {
    private final Timer prefillQueue;
    private final Timer prefillCompute;
    private final Timer kvTransfer;
    private final DistributionSummary kvBytes;
    private final Timer decodeStep;
    private final DistributionSummary batchSize;
    private final Counter refused;

    private final MeterRegistry registry;
    private final String workerId;
    /**
     * A FunctionCounter holds its object weakly: a supplier nothing else holds is collected, and the counter
     * then repeats its last value forever (the decode workers' evictions read 0 after a GC).
     */
    private final List<Object> counted = new ArrayList<>();

    public WorkerMetrics(MeterRegistry registry, String workerId) {
        this.registry = registry;
        this.workerId = workerId;
        prefillQueue = Timer.builder("tandem.prefill.queue")
                .tag("worker", workerId)
                .description("time a prompt waits in a prefill worker's queue")
                .serviceLevelObjectives(Buckets.STAGE)
                .register(registry);
        prefillCompute = Timer.builder("tandem.prefill.compute")
                .tag("worker", workerId)
                .description("prefill compute time of one prompt")
                .serviceLevelObjectives(Buckets.STAGE)
                .register(registry);
        kvTransfer = Timer.builder("tandem.kv.transfer")
                .tag("worker", workerId)
                .description("from the first KV chunk sent to the decode worker's acknowledgement")
                .serviceLevelObjectives(Buckets.STAGE)
                .register(registry);
        kvBytes = DistributionSummary.builder("tandem.kv.transfer.bytes")
                .tag("worker", workerId)
                .baseUnit("bytes")
                .description("KV bytes shipped per request")
                .serviceLevelObjectives(Buckets.KV_BYTES)
                .register(registry);
        decodeStep = Timer.builder("tandem.decode.step")
                .tag("worker", workerId)
                .description("one continuous-batch decode step")
                .serviceLevelObjectives(Buckets.ITL)
                .register(registry);
        batchSize = DistributionSummary.builder("tandem.decode.batch.size")
                .tag("worker", workerId)
                .description("sequences advanced by one decode step")
                .serviceLevelObjectives(1, 2, 4, 8, 16, 32, 64, 128, 256)
                .register(registry);
        refused = Counter.builder("tandem.worker.refused")
                .tag("worker", workerId)
                .description("requests refused because the worker's queue or KV memory was full")
                .register(registry);
    }

    /**
     * The worker's reusable KV: bytes and blocks held and evictions so far, read at scrape time (a prefill
     * worker's prefix cache, a decode worker's kept blocks).
     */
    public void kvCache(DoubleSupplier bytes, DoubleSupplier blocks, DoubleSupplier evictions) {
        gauge(
                "tandem.kv.cache.bytes",
                bytes,
                "bytes",
                "KV kept for reuse (prefix cache or finished sequences' blocks)");
        gauge("tandem.kv.cache.blocks", blocks, null, "KV blocks kept for reuse");
        counted.add(evictions);
        FunctionCounter.builder("tandem.kv.cache.evictions", evictions, DoubleSupplier::getAsDouble)
                .tag("worker", workerId)
                .description("KV blocks evicted from the reuse cache")
                .register(registry);
    }

    /**
     * A worker in front of a GPU server that publishes KV events: batches applied, gaps seen, resets (what
     * it knew was dropped), and the Tandem blocks the engine holds as its events tell, per tier.
     */
    public void upstreamKvEvents(
            DoubleSupplier batches,
            DoubleSupplier gaps,
            DoubleSupplier resets,
            DoubleSupplier blocks,
            DoubleSupplier lowerBlocks) {
        counter("tandem.upstream.kv.events", batches, "KV event batches of the GPU server applied");
        counter("tandem.upstream.kv.events.gaps", gaps, "gaps in the GPU server's KV event sequence");
        counter(
                "tandem.upstream.kv.events.resets",
                resets,
                "times the worker dropped what it knew of the GPU server's cache (unfillable gap, restart, lost"
                        + " connection)");
        gauge("tandem.kv.cache.blocks", blocks, null, "KV blocks kept for reuse");
        gauge("tandem.kv.cache.lower.blocks", lowerBlocks, null, "KV blocks kept in a lower tier (offloaded)");
    }

    private void counter(String name, DoubleSupplier value, String description) {
        counted.add(value);
        FunctionCounter.builder(name, value, DoubleSupplier::getAsDouble)
                .tag("worker", workerId)
                .description(description)
                .register(registry);
    }

    /**
     * A decode worker's KV waiting for its request: parked until DECODE_REQUEST claims it, and still
     * arriving from prefill workers; both count against its capacity.
     */
    public void kvInbox(
            DoubleSupplier parkedBytes, DoubleSupplier parked, DoubleSupplier incomingBytes, DoubleSupplier incoming) {
        gauge("tandem.kv.parked.bytes", parkedBytes, "bytes", "KV parked until its decode request claims it");
        gauge("tandem.kv.parked.requests", parked, null, "requests whose KV is parked");
        gauge("tandem.kv.incoming.bytes", incomingBytes, "bytes", "KV received of transfers still arriving");
        gauge("tandem.kv.incoming.requests", incoming, null, "KV transfers still arriving");
    }

    /**
     * The worker's KV capacity after the memory budget: what a decode worker may hold in all, what a
     * prefill worker keeps for reuse.
     */
    public void kvCapacity(long bytes) {
        gauge(
                "tandem.kv.capacity.bytes",
                () -> bytes,
                "bytes",
                "KV capacity: this worker's share of the memory budget");
    }

    private void gauge(String name, DoubleSupplier value, String unit, String description) {
        Gauge.builder(name, value::getAsDouble)
                .tag("worker", workerId)
                .baseUnit(unit)
                .description(description)
                .register(registry);
    }

    public void prefillQueued(long nanos) {
        prefillQueue.record(nanos, TimeUnit.NANOSECONDS);
    }

    public void prefillComputed(long nanos) {
        prefillCompute.record(nanos, TimeUnit.NANOSECONDS);
    }

    public void kvShipped(long nanos, long bytes) {
        kvTransfer.record(nanos, TimeUnit.NANOSECONDS);
        kvBytes.record(bytes);
    }

    public void decodeStep(long nanos, int sequences) {
        decodeStep.record(nanos, TimeUnit.NANOSECONDS);
        batchSize.record(sequences);
    }

    public void refused() {
        refused.increment();
    }
}
