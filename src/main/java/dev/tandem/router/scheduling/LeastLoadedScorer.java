package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;

/**
 * The seed's prefill policy: fewest requests in flight, counted by every router replica as they
 * dispatch (fresh to the request, unlike a worker's heartbeat).
 */
public final class LeastLoadedScorer extends LowerIsBetterScorer {
    @Override
    public String name() {
        return "least-loaded";
    }

    @Override
    double value(SchedulingRequest request, WorkerView worker) {
        return worker.inFlight();
    }
}
