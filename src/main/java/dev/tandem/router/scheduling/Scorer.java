package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/** Rates a worker in [0, 1] (higher is better) against the other candidates. Pure: no I/O, no state. */
public interface Scorer {
    String name();

    double score(SchedulingRequest request, WorkerView worker, List<WorkerView> candidates);
}
