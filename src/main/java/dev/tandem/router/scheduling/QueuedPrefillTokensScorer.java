package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;

/**
 * Fewest prompt tokens waiting for or in prefill (lower is better): a long prompt weighs what it costs,
 * where {@code least-loaded} counts every request as one. The worker's own count is a heartbeat old (up to
 * ~250 ms), so the value is the larger of it and the prompt tokens the routers have dispatched to the
 * worker for prefill and not yet seen prefilled, which the routers count as they dispatch: a burst sent
 * since the last heartbeat counts at once, and a worker that has drained its queue since counts as soon
 * as it says so.
 */
public final class QueuedPrefillTokensScorer extends LowerIsBetterScorer {
    @Override
    public String name() {
        return "queued-prefill-tokens";
    }

    @Override
    double value(SchedulingRequest request, WorkerView worker) {
        return queuedPrefillTokens(worker);
    }

    /** The fresher of the worker's reported queue and the routers' undelivered prefill dispatches. */
    static long queuedPrefillTokens(WorkerView worker) {
        return Math.max(worker.load().queuedPrefillTokens(), worker.inFlightPrefillTokens());
    }
}
