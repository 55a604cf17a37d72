package dev.tandem.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.security.RegistrySeal;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.concurrent.TimeUnit;

/**
 * A worker's presence in the registry map: put with a TTL of a few heartbeats and refreshed on every
 * heartbeat, so a worker that dies without a word disappears by itself.
 */
public final class WorkerAnnouncer {
    private static final java.util.logging.Logger LOG =
            java.util.logging.Logger.getLogger(WorkerAnnouncer.class.getName());

    private final Vertx vertx;
    private final IMap<String, String> map;
    private final IMap<String, Long> models;
    private final long heartbeatMs;
    private final long ttlMs;
    private java.util.function.Supplier<WorkerDescriptor> descriptor;
    private String workerId;
    private long timerId = -1;
    /** Set by {@link #stop}: a start still checking the registry must then announce nothing. */
    private volatile boolean stopped;

    private final RegistrySeal seal;

    public WorkerAnnouncer(Vertx vertx, HazelcastInstance hazelcast, RegistrySeal seal, long heartbeatMs, long ttlMs) {
        this.vertx = vertx;
        this.seal = seal;
        this.map = hazelcast.getMap(ClusterNames.WORKERS);
        this.models = hazelcast.getMap(ClusterNames.MODELS);
        this.heartbeatMs = heartbeatMs;
        this.ttlMs = ttlMs;
    }

    /**
     * Announces the worker and keeps announcing it; completes once the first entry is in the map. The
     * supplier is asked on every heartbeat, on the caller's context, so it may read the worker's state.
     */
    public Future<Void> start(java.util.function.Supplier<WorkerDescriptor> descriptor) {
        this.descriptor = descriptor;
        this.stopped = false;
        Context context = vertx.getOrCreateContext();
        WorkerDescriptor first = descriptor.get();
        // Reading the whole registry blocks: a worker thread, once per worker start.
        return vertx.<String>executeBlocking(() -> conflict(first), false).compose(conflict -> {
            if (stopped) {
                // The worker left while its model was checked: announcing it now would leave a ghost.
                return Future.failedFuture(
                        new IllegalStateException("worker " + first.workerId() + " left while joining"));
            }
            if (conflict != null) {
                LOG.severe(conflict);
                return Future.failedFuture(new ModelConflictException(conflict));
            }
            timerId = vertx.setPeriodic(heartbeatMs, id -> put(context));
            return put(context);
        });
    }

    /**
     * Why {@code d} may not join: its model's name is held by other weights (another fingerprint). KV of
     * one model must never reach the other, and a name must say which model a request gets, so the
     * later worker is refused. The name is claimed atomically ({@link ClusterNames#MODELS}), so of two
     * workers starting at once only one set of weights gets it. Null when {@code d} may join.
     */
    private String conflict(WorkerDescriptor d) {
        long mine = d.modelFingerprint();
        Long claimed = models.putIfAbsent(d.model(), mine, ttlMs + 1000, TimeUnit.MILLISECONDS);
        long holder = claimed == null ? mine : claimed;
        // One read of the registry: the worker that holds the name with other weights (the claim's, or one
        // registered while no claim stood), so the refusal can say which.
        WorkerDescriptor other = null;
        for (java.util.Map.Entry<String, String> e : map.entrySet()) {
            String json = seal.open(e.getKey(), e.getValue());
            if (json == null) {
                continue; // an entry no member of this cluster wrote holds no name
            }
            WorkerDescriptor w = WorkerDescriptor.CODEC.decode(new io.vertx.core.json.JsonObject(json));
            if (!w.workerId().equals(d.workerId())
                    && w.model().equals(d.model())
                    && w.modelFingerprint() != mine
                    && (other == null || w.modelFingerprint() == holder)) {
                other = w;
            }
        }
        if (holder == mine && other == null) {
            return null;
        }
        long theirs = holder != mine ? holder : other.modelFingerprint();
        return "worker " + d.workerId() + " refused: model '" + d.model() + "' is already served by "
                + (other == null ? "workers" : "worker " + other.workerId()) + " with fingerprint "
                + Long.toHexString(theirs) + ", this worker's weights have fingerprint " + Long.toHexString(mine)
                + " — two different models under one name; give one of them another name (a checkpoint is named"
                + " after its file), or wait until the other's workers have been gone for " + (ttlMs + 1000) + " ms";
    }

    /** A worker refused because its model's name is taken by other weights. */
    public static final class ModelConflictException extends IllegalStateException {
        ModelConflictException(String message) {
            super(message);
        }
    }

    /**
     * Takes the worker's id in the registry if nobody holds it, atomically across the cluster: true when
     * taken (then {@link #stop} removes the entry again). For workers that join from outside, whose ids
     * are chosen by someone else.
     */
    public Future<Boolean> claim(WorkerDescriptor d) {
        String json = seal.seal(d.workerId(), WorkerDescriptor.CODEC.encode(d).encode());
        // IMap has no asynchronous putIfAbsent: a worker thread waits for it (joins are rare).
        return vertx.executeBlocking(
                        () -> map.putIfAbsent(d.workerId(), json, ttlMs + 1000, TimeUnit.MILLISECONDS), false)
                .map(previous -> {
                    if (previous == null) {
                        workerId = d.workerId();
                    }
                    return previous == null;
                });
    }

    /** Says now what the next heartbeat would say (e.g. after a drain). */
    public Future<Void> announceNow() {
        return put(vertx.getOrCreateContext());
    }

    private Future<Void> put(Context context) {
        WorkerDescriptor d = descriptor.get();
        workerId = d.workerId();
        String json = seal.seal(d.workerId(), WorkerDescriptor.CODEC.encode(d).encode());
        // The model's name stays claimed while any of its workers lives (not awaited: the entry is what counts).
        models.setAsync(d.model(), d.modelFingerprint(), ttlMs + 1000, TimeUnit.MILLISECONDS);
        // Hazelcast keeps expiry in whole seconds, so a TTL of N ms may lapse after N - 1000: a second of
        // slack keeps a live worker from flickering out of the registry between heartbeats.
        return Future.fromCompletionStage(
                map.setAsync(d.workerId(), json, ttlMs + 1000, TimeUnit.MILLISECONDS), context);
    }

    /** Stops the heartbeat and removes the entry, so routers stop scheduling onto this worker at once. */
    public Future<Void> stop() {
        stopped = true;
        if (timerId >= 0) {
            vertx.cancelTimer(timerId);
            timerId = -1;
        }
        if (workerId == null) {
            return Future.succeededFuture();
        }
        return Future.fromCompletionStage(map.deleteAsync(workerId), vertx.getOrCreateContext())
                .mapEmpty();
    }
}
