package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.ArrayList;
import java.util.Collections;
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
        // On every request for every filter: no stream, and no copy when every candidate is admitted.
        List<WorkerView> kept = null;
        for (int i = 0; i < candidates.size(); i++) {
            WorkerView w = candidates.get(i);
            boolean admitted = admits(request, w);
            if (kept != null) {
                if (admitted) {
                    kept.add(w);
                }
            } else if (!admitted) {
                kept = new ArrayList<>(candidates.subList(0, i));
            }
        }
        return kept == null ? candidates : Collections.unmodifiableList(kept);
    }
}
