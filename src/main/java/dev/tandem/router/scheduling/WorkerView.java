package dev.tandem.router.scheduling;

/**
 * What a scheduling plugin may know about one worker: a snapshot, never a live object.
 *
 * @param inFlight requests this worker is serving as counted by the router (dispatched, not yet released)
 */
public record WorkerView(String id, String model, int inFlight, boolean draining) {
}
