package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/** Drops workers that cannot serve the request. Pure: no I/O, no state. */
public interface Filter {
    String name();

    boolean admits(SchedulingRequest request, WorkerView worker);

    /**
     * The candidates this filter keeps: by default those it admits. A filter that only expresses a
     * preference may keep more (see {@link LoadThresholdFilter}).
     */
    default List<WorkerView> filter(SchedulingRequest request, List<WorkerView> candidates) {
        return candidates.stream().filter(w -> admits(request, w)).toList();
    }
}
