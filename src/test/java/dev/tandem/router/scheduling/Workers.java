package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;

/** Fixture workers for scheduling tests: one model (fingerprint 7) unless a test says otherwise. */
final class Workers {
    static final long FINGERPRINT = 7;

    private Workers() {}

    /** A worker with {@code inFlight} requests dispatched to it and an idle heartbeat. */
    static WorkerView w(String id, int inFlight) {
        return view(id, inFlight, WorkerLoad.IDLE, false, FINGERPRINT);
    }

    static WorkerView draining(String id, int inFlight) {
        return view(id, inFlight, WorkerLoad.IDLE, true, FINGERPRINT);
    }

    /** A worker whose last heartbeat reported {@code load}. */
    static WorkerView reporting(String id, int inFlight, WorkerLoad load) {
        return view(id, inFlight, load, false, FINGERPRINT);
    }

    /**
     * A worker whose last heartbeat reported {@code load}, with the routers' fresh counts: {@code inFlight}
     * requests and {@code inFlightPrefillTokens} prompt tokens dispatched to it and not yet prefilled.
     */
    static WorkerView counted(String id, int inFlight, long inFlightPrefillTokens, WorkerLoad load) {
        return new WorkerView(descriptor(id, load, false, FINGERPRINT), inFlight, inFlightPrefillTokens);
    }

    /** As {@link #counted}, for a worker that announces a KV cache of 16-token blocks. */
    static WorkerView caching(String id, int inFlight, long inFlightPrefillTokens, WorkerLoad load) {
        WorkerDescriptor d = descriptor(id, load, false, FINGERPRINT);
        return new WorkerView(
                new WorkerDescriptor(
                        d.workerId(),
                        d.role(),
                        d.model(),
                        d.modelFingerprint(),
                        d.nodeId(),
                        d.maxBatch(),
                        false,
                        load,
                        new dev.tandem.protocol.CacheSpec(16, false)),
                inFlight,
                inFlightPrefillTokens);
    }

    static WorkerView view(String id, int inFlight, WorkerLoad load, boolean draining, long fingerprint) {
        return new WorkerView(descriptor(id, load, draining, fingerprint), inFlight);
    }

    private static WorkerDescriptor descriptor(String id, WorkerLoad load, boolean draining, long fingerprint) {
        WorkerRole role = id.startsWith("p") ? WorkerRole.PREFILL : WorkerRole.DECODE;
        return new WorkerDescriptor(id, role, "m", fingerprint, "node-1", 8, draining, load);
    }
}
