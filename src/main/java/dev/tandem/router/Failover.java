package dev.tandem.router;

import java.util.List;
import java.util.function.ToLongFunction;
import java.util.logging.Logger;

/**
 * Where a worker's death is handled, for the requests it served: a worker that left the registry (its
 * cluster member died, its heartbeat lapsed, it withdrew) or whose decode steps stopped hands every
 * request it holds to another pair ({@link RequestLifecycle#move}). A decode worker's own error report
 * and a failed dispatch are read where they arrive, in {@link RequestLifecycle}.
 */
final class Failover {
    private static final Logger LOG = Logger.getLogger(Failover.class.getName());

    private final RouterLoop loop;
    private final RequestLifecycle lifecycle;
    private final long stallTimeoutMs;

    Failover(RouterLoop loop, RequestLifecycle lifecycle, long stallTimeoutMs) {
        this.loop = loop;
        this.lifecycle = lifecycle;
        this.stallTimeoutMs = stallTimeoutMs;
    }

    /** A worker left: its sessions are forgotten and its requests move. */
    void workerGone(String workerId) {
        lifecycle.forgetWorker(workerId);
        for (ActiveRequest a : lifecycle.active()) {
            if ((a.state().holdsDecode() && workerId.equals(a.decodeWorker))
                    || (a.state().holdsPrefill() && workerId.equals(a.prefillWorker))) {
                LOG.info(() -> "request " + a.id + ": worker " + workerId + " is gone, moving the request");
                lifecycle.guarded(a, () -> lifecycle.move(a, List.of(workerId)));
            }
        }
    }

    /**
     * Moves every decoding request whose worker is stuck: the request got nothing for the stall timeout
     * and the worker's decode step count (from its heartbeats) has not moved for as long. A request that
     * only waits for a batch slot on a busy worker stays: that worker's steps go on.
     */
    void moveStalled(ToLongFunction<String> workerProgressNanos) {
        long now = loop.nanoTime();
        long stallNanos = stallTimeoutMs * 1_000_000;
        for (ActiveRequest a : lifecycle.active()) {
            if (a.state() == RequestState.DECODING
                    && now - a.lastProgressNanos > stallNanos
                    && now - workerProgressNanos.applyAsLong(a.decodeWorker) > stallNanos) {
                LOG.info(() -> "request " + a.id + ": no token and no decode step from " + a.decodeWorker + " for "
                        + stallTimeoutMs + " ms, moving it");
                String stalled = a.decodeWorker;
                lifecycle.guarded(a, () -> lifecycle.move(a, List.of(stalled)));
            }
        }
    }
}
