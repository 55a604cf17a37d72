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
    /** Prompt tokens this router has sent each worker to prefill and not yet seen prefilled. */
    private final Map<String, Long> prefillTokens = new ConcurrentHashMap<>();

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

    /** {@code tokens} more (or, negative, fewer) prompt tokens to prefill on a worker. */
    public void prefillTokens(String workerId, long tokens) {
        prefillTokens.compute(workerId, (k, v) -> {
            long now = (v == null ? 0 : v) + tokens;
            return now <= 0 ? null : now;
        });
        onChange.run();
    }

    public long prefillTokens(String workerId) {
        return prefillTokens.getOrDefault(workerId, 0L);
    }

    public Map<String, Long> prefillTokensSnapshot() {
        return Map.copyOf(prefillTokens);
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

    /**
     * A request's prompt is computed (its first token came ahead of the KV): its tokens leave its prefill
     * worker's queue now, though the request holds the worker until the KV lands. Counted until then, a
     * worker shipping the KV of a long prompt looked busy with it (benchmarks.md, "A bounded trade").
     */
    void computed(ActiveRequest a) {
        if (a.state() == RequestState.PREFILLING && a.prefillTokens > 0) {
            prefillTokens(a.prefillWorker, -a.prefillTokens);
            a.prefillTokens = 0;
        }
    }

    /** A request left {@code left} for {@code next}: takes and gives back worker loads as the two states hold them. */
    void follow(ActiveRequest a, RequestState left, RequestState next) {
        if (left.holdsPrefill() && !next.holdsPrefill()) {
            release(a.prefillWorker);
            prefillTokens(a.prefillWorker, -a.prefillTokens);
        }
        if (left.holdsDecode() && !next.holdsDecode()) {
            release(a.decodeWorker);
        }
        if (!left.holdsPrefill() && next.holdsPrefill()) {
            acquire(a.prefillWorker);
            prefillTokens(a.prefillWorker, a.prefillTokens);
        }
        if (!left.holdsDecode() && next.holdsDecode()) {
            acquire(a.decodeWorker);
        }
    }
}
