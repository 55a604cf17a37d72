package dev.tandem.router;

import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;

/**
 * The one load model: every registered worker as it reports itself (registry entry and heartbeat load)
 * joined with what the router replicas have in flight on it. Scheduling and the web console read
 * workers through it.
 */
public final class WorkerViews {
    private final Function<WorkerRole, List<WorkerDescriptor>> registry;
    private final ToIntFunction<String> inFlight;
    private final ToLongFunction<String> prefillTokens;

    /**
     * @param registry      the registered workers of a role, sorted by id (a snapshot per call)
     * @param inFlight      requests every router replica has in flight on a worker
     * @param prefillTokens prompt tokens every router replica has sent a worker to prefill, not yet prefilled
     */
    public WorkerViews(
            Function<WorkerRole, List<WorkerDescriptor>> registry,
            ToIntFunction<String> inFlight,
            ToLongFunction<String> prefillTokens) {
        this.registry = registry;
        this.inFlight = inFlight;
        this.prefillTokens = prefillTokens;
    }

    public List<WorkerView> of(WorkerRole role) {
        return of(role, w -> true);
    }

    /** The workers of a role that {@code which} admits (one model's, say). */
    public List<WorkerView> of(WorkerRole role, java.util.function.Predicate<WorkerDescriptor> which) {
        // Twice per scheduling decision: a plain loop (the stream's pipeline showed in the burst profile).
        List<WorkerDescriptor> registered = registry.apply(role);
        List<WorkerView> views = new ArrayList<>(registered.size());
        for (WorkerDescriptor w : registered) {
            if (which.test(w)) {
                views.add(
                        new WorkerView(w, inFlight.applyAsInt(w.workerId()), prefillTokens.applyAsLong(w.workerId())));
            }
        }
        return Collections.unmodifiableList(views);
    }
}
