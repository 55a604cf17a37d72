package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/** The seed's decode policy: the worker holding the session's warm KV scores 1, every other 0. */
public final class SessionAffinityScorer implements Scorer {
    @Override
    public String name() {
        return "session-affinity";
    }

    @Override
    public double score(SchedulingRequest request, WorkerView worker, List<WorkerView> candidates) {
        return worker.id().equals(request.affinityWorkerId()) ? 1.0 : 0.0;
    }
}
