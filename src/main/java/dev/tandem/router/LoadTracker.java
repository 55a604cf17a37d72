package dev.tandem.router;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Requests this router has in flight per worker: taken when a worker is chosen, given back exactly
 * once on every path (done, error, cancel, timeout). Read by the least-loaded scorer; safe from any thread.
 */
public final class LoadTracker {
  private final Map<String, Integer> inFlight = new ConcurrentHashMap<>();

  public void acquire(String workerId) {
    inFlight.merge(workerId, 1, Integer::sum);
  }

  public void release(String workerId) {
    inFlight.computeIfPresent(workerId, (k, v) -> v <= 1 ? null : v - 1);
  }

  public int inFlight(String workerId) {
    return inFlight.getOrDefault(workerId, 0);
  }

  public int total() {
    return inFlight.values().stream().mapToInt(Integer::intValue).sum();
  }
}
