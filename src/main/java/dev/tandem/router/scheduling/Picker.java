package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/** Chooses one of the scored candidates. Pure: randomness, if any, comes from the request's tick. */
public interface Picker {
    String name();

    /** @param scored never empty */
    WorkerView pick(SchedulingRequest request, List<ScoredWorker> scored);

    /** A candidate and its weighted total score. */
    record ScoredWorker(WorkerView worker, double score) {}
}
