package dev.tandem.worker.upstream;

import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.config.UpstreamSettings;
import dev.tandem.config.WorkerSettings;
import dev.tandem.metrics.WorkerMetrics;
import dev.tandem.upstream.UpstreamModel;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What every upstream worker of a node is built from, whatever its role. The announcer is a supplier:
 * each worker gets its own, made when the worker is.
 */
public record UpstreamWorkerSetup(
        UpstreamModel model,
        UpstreamSettings upstream,
        WorkerSettings settings,
        Supplier<WorkerAnnouncer> announcer,
        String nodeId,
        Function<String, WorkerMetrics> metrics) {}
