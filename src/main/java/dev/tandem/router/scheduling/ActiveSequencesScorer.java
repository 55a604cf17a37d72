package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;

/**
 * Fewest sequences on a decode worker (lower is better): each one is a share of every decode step, so
 * fewer sequences mean faster tokens for the newcomer. The worker's own count (sequences in or waiting
 * for its batch) is a heartbeat old (up to ~250 ms), so the value is the larger of it and the requests
 * every router replica has dispatched to the worker and not yet seen end, which are counted as they are
 * dispatched: a burst sent since the last heartbeat counts at once.
 */
public final class ActiveSequencesScorer extends LowerIsBetterScorer {
    @Override
    public String name() {
        return "active-sequences";
    }

    @Override
    double value(SchedulingRequest request, WorkerView worker) {
        return activeSequences(worker);
    }

    /** The fresher of the worker's reported sequences and the routers' requests in flight to it. */
    static long activeSequences(WorkerView worker) {
        return Math.max(worker.load().activeSequences(), worker.inFlight());
    }
}
