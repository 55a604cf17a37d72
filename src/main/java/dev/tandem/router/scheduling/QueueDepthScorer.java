package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;

/**
 * Fewest prompt tokens waiting for or in prefill, as the worker reported at its last heartbeat: a long
 * prompt weighs what it costs, where {@code least-loaded} counts every request as one. The report is a
 * heartbeat old, so it is best weighted beside {@code least-loaded}, which sees dispatches at once.
 */
public final class QueueDepthScorer extends LowerIsBetterScorer {
    @Override
    public String name() {
        return "queue-depth";
    }

    @Override
    long value(WorkerView worker) {
        return worker.load().queuedPrefillTokens();
    }
}
