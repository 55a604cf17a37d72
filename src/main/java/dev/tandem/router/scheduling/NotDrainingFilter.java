package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;

/** A draining worker finishes what it has and takes nothing new. */
public final class NotDrainingFilter implements Filter {
    @Override
    public String name() {
        return "not-draining";
    }

    @Override
    public boolean admits(SchedulingRequest request, WorkerView worker) {
        return !worker.draining();
    }
}
