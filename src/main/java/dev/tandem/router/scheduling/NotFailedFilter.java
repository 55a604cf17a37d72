package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;

/** A retry or failover goes elsewhere: workers that already failed this request are left out. Always on. */
public final class NotFailedFilter implements Filter {
    @Override
    public String name() {
        return "not-failed";
    }

    @Override
    public boolean admits(SchedulingRequest request, WorkerView worker) {
        return !request.avoid().contains(worker.id());
    }
}
