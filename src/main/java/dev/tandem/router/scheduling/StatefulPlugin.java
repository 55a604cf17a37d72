package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * A scheduling plugin that learns from the choices made, as the Gateway API Inference Extension's
 * prefix-cache plugin does: before the filters it may add what it knows to the request, and after a
 * pick is taken it is told. Everything else in a profile stays pure; the state lives here, and changes
 * only in {@link #onPicked}, {@link #forgetWorker} and {@link #close}. Loop only, like its profile.
 */
public interface StatefulPlugin {
    String name();

    /** The request as the profile's filters, scorers and picker see it: {@code request} with what this plugin knows. */
    default SchedulingRequest prepare(SchedulingRequest request, List<WorkerView> workers) {
        return request;
    }

    /**
     * The profile chose {@code choice} for {@code request}, and the choice was taken (the router may drop a
     * pick and choose again, e.g. when no prefill worker can feed the decode worker picked first).
     */
    void onPicked(SchedulingRequest request, WorkerView choice);

    /** A worker left the registry. */
    default void forgetWorker(String workerId) {}

    /** The profile is dropped (its model is no longer served): give back what it holds. */
    default void close() {}
}
