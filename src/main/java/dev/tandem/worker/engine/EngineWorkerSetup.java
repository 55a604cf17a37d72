package dev.tandem.worker.engine;

import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.config.WorkerSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.KvBlockPool;
import dev.tandem.metrics.WorkerMetrics;
import dev.tandem.tracing.Tracing;
import io.opentelemetry.api.trace.Tracer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What every in-process engine worker of a node is built from, whatever its role: the node's engine and
 * KV pool (shared by its workers), the worker settings, and per worker its own announcer and meters.
 *
 * @param metrics a worker's meters, by worker id
 * @param tracer  where the workers' spans go (children of the router's, through the messages' trace context)
 */
public record EngineWorkerSetup(
        Engine engine,
        WorkerSettings settings,
        Supplier<WorkerAnnouncer> announcer,
        String nodeId,
        Function<String, WorkerMetrics> metrics,
        KvBlockPool pool,
        Tracer tracer) {

    /** A setup whose workers make no spans (tests and benchmarks that build workers by hand). */
    public EngineWorkerSetup(
            Engine engine,
            WorkerSettings settings,
            Supplier<WorkerAnnouncer> announcer,
            String nodeId,
            Function<String, WorkerMetrics> metrics,
            KvBlockPool pool) {
        this(engine, settings, announcer, nodeId, metrics, pool, Tracing.OFF.tracer());
    }
}
