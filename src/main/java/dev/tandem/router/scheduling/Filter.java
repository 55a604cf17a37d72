package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;

/** Drops workers that cannot serve the request. Pure: no I/O, no state. */
public interface Filter {
    String name();

    boolean admits(SchedulingRequest request, WorkerView worker);
}
