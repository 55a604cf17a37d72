package dev.tandem.router.scheduling;

import dev.tandem.config.SchedulerSettings.LoadThreshold;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * Leaves out workers over a load threshold — more queued prefill tokens, more active sequences, or a
 * larger share of KV capacity in use than configured — so that a scorer's preference (a cached prefix,
 * session affinity) does not pile work onto a worker that is already full while another is free.
 * Queued tokens and sequences are read as their scorers read them: the larger of the worker's report (a
 * heartbeat old) and the routers' own counts (fresh at dispatch). KV use only the worker reports; a
 * worker reporting no capacity passes.
 *
 * <p>When every candidate is over, the filter keeps them all: a threshold is a preference, and it is
 * the workers that refuse what they cannot hold (the router then tries the others, and answers 429 when
 * all refuse). Leaving nobody would end the request as if no worker existed (503) and turn away a worker
 * that still had room.
 */
public final class LoadThresholdFilter implements Filter {
    private final LoadThreshold threshold;

    public LoadThresholdFilter(LoadThreshold threshold) {
        this.threshold = threshold;
    }

    @Override
    public String name() {
        return LoadThreshold.PLUGIN;
    }

    @Override
    public boolean admits(SchedulingRequest request, WorkerView worker) {
        return QueuedPrefillTokensScorer.queuedPrefillTokens(worker) <= threshold.maxQueuedPrefillTokens()
                && ActiveSequencesScorer.activeSequences(worker) <= threshold.maxActiveSequences()
                && kvUtilization(worker.load()) <= threshold.maxKvUtilization();
    }

    @Override
    public List<WorkerView> filter(SchedulingRequest request, List<WorkerView> candidates) {
        List<WorkerView> under = Filter.super.filter(request, candidates);
        return under.isEmpty() ? candidates : under;
    }

    /** The share of its KV capacity a worker reports in use; 0 when it reports no capacity. */
    private static double kvUtilization(WorkerLoad load) {
        return load.kvBytesCapacity() <= 0 ? 0.0 : (double) load.kvBytesUsed() / load.kvBytesCapacity();
    }
}
