package dev.tandem.router;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Requests this router has in flight per worker: taken when a worker is chosen, given back exactly
 * once on every path (done, error, cancel, timeout). Read by scheduling and published to the other
 * replicas. Changed on the router's event loop; safe to read from any thread (tests, admin).
 */
public final class LoadTracker {
    private final Map<String, Integer> inFlight = new ConcurrentHashMap<>();
    private volatile Runnable onChange = () -> {};

    /** Called after every change (the replica's load reporter coalesces them). */
    void onChange(Runnable listener) {
        this.onChange = listener;
    }

    public void acquire(String workerId) {
        inFlight.merge(workerId, 1, Integer::sum);
        onChange.run();
    }

    public void release(String workerId) {
        inFlight.computeIfPresent(workerId, (k, v) -> v <= 1 ? null : v - 1);
        onChange.run();
    }

    public int inFlight(String workerId) {
        return inFlight.getOrDefault(workerId, 0);
    }

    public int total() {
        return inFlight.values().stream().mapToInt(Integer::intValue).sum();
    }

    public Map<String, Integer> snapshot() {
        return Map.copyOf(inFlight);
    }
}
