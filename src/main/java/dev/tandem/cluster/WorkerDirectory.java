package dev.tandem.cluster;

import com.hazelcast.core.EntryEvent;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryEvictedListener;
import com.hazelcast.map.listener.EntryExpiredListener;
import com.hazelcast.map.listener.EntryRemovedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.security.RegistrySeal;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A router's local view of the worker registry, kept current by an entry listener, so scheduling
 * reads memory and never waits on the cluster. Workers of a cluster member that leaves are dropped
 * at once, without waiting for their entries to expire.
 */
public final class WorkerDirectory {
    private static final Logger LOG = Logger.getLogger(WorkerDirectory.class.getName());

    /**
     * How long an expired entry must stay away before its worker counts as gone. Hazelcast has expired the
     * entry of a live worker while partitions migrated (members joining: its heartbeats' updates and the
     * expiry met on different owners); the worker's next heartbeat puts it back. A worker that really
     * stopped heartbeating has been silent for the whole TTL already; one whose JVM or node died is dropped
     * at once by the member watch, not by expiry.
     */
    static final long EXPIRY_GRACE_MS = 1_000;

    private final Vertx vertx;
    private final HazelcastInstance hazelcast;
    private final IMap<String, String> map;
    private final Map<String, WorkerDescriptor> workers = new ConcurrentHashMap<>();
    /** Bumped after every change of {@link #workers}: a {@link Sorted} built at an older version is stale. */
    private final AtomicLong version = new AtomicLong();
    /**
     * The workers sorted by id, all and by role, as of a version: every scheduling decision reads them,
     * and registry changes (joins, departures, heartbeats) are far rarer than requests.
     */
    private volatile Sorted sorted;
    /** When each worker's decode step count last moved (or it appeared): a stuck worker's stays put. */
    private final Map<String, Long> progress = new ConcurrentHashMap<>();

    private final List<java.util.function.Consumer<String>> removalListeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    private final List<java.util.function.Consumer<String>> additionListeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    private UUID entryListener;
    private MemberWatch members;

    private final RegistrySeal seal;

    public WorkerDirectory(Vertx vertx, HazelcastInstance hazelcast, RegistrySeal seal) {
        this.vertx = vertx;
        this.seal = seal;
        this.hazelcast = hazelcast;
        this.map = hazelcast.getMap(ClusterNames.WORKERS);
    }

    private final class Listener
            implements EntryAddedListener<String, String>,
                    EntryUpdatedListener<String, String>,
                    EntryRemovedListener<String, String>,
                    EntryExpiredListener<String, String>,
                    EntryEvictedListener<String, String> {
        @Override
        public void entryAdded(EntryEvent<String, String> e) {
            upsert(e.getKey(), e.getValue());
        }

        @Override
        public void entryUpdated(EntryEvent<String, String> e) {
            upsert(e.getKey(), e.getValue());
        }

        @Override
        public void entryRemoved(EntryEvent<String, String> e) {
            remove(e.getKey());
        }

        @Override
        public void entryExpired(EntryEvent<String, String> e) {
            expired(e.getKey(), EXPIRY_GRACE_MS);
        }

        @Override
        public void entryEvicted(EntryEvent<String, String> e) {
            remove(e.getKey());
        }
    }

    /** An expiry is believed once the entry is still absent {@code graceMs} later. */
    void expired(String workerId, long graceMs) {
        vertx.setTimer(
                graceMs,
                t -> map.getAsync(workerId).whenComplete((json, failure) -> {
                    if (failure == null && json != null) {
                        LOG.info(() -> "worker " + workerId + ": its registry entry expired but is back: kept");
                        upsert(workerId, json);
                    } else {
                        remove(workerId);
                    }
                }));
    }

    private void remove(String workerId) {
        progress.remove(workerId);
        if (workers.remove(workerId) != null) {
            version.incrementAndGet();
            removalListeners.forEach(l -> l.accept(workerId));
        }
    }

    /**
     * Called (on a Hazelcast thread: hop to your own context) with the id of every worker that leaves
     * the registry — withdrawn, expired, or on a cluster member that left.
     */
    public void onRemoved(java.util.function.Consumer<String> listener) {
        removalListeners.add(listener);
    }

    /** Called (on a Hazelcast thread: hop to your own context) with the id of every worker that joins. */
    public void onAdded(java.util.function.Consumer<String> listener) {
        additionListeners.add(listener);
    }

    private void upsert(String key, String stored) {
        // An entry that does not verify changes nothing: a forged one cannot replace a real worker's either.
        String json = seal.open(key, stored);
        if (json == null) {
            return;
        }
        try {
            WorkerDescriptor d = WorkerDescriptor.CODEC.decode(new JsonObject(json));
            WorkerDescriptor before = workers.put(key, d);
            version.incrementAndGet();
            if (before == null || before.load().decodeSteps() != d.load().decodeSteps()) {
                progress.put(key, System.nanoTime());
            }
            if (before == null) {
                additionListeners.forEach(l -> l.accept(key));
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "ignoring malformed registry entry " + key + ": " + e.getMessage());
        }
    }

    /** Subscribes, then loads what is already registered (the listener covers anything racing with the load). */
    public Future<Void> start() {
        return vertx.executeBlocking(() -> {
            entryListener = map.addEntryListener(new Listener(), true);
            members = MemberWatch.onLeave(hazelcast, nodeId -> {
                for (WorkerDescriptor w : List.copyOf(workers.values())) {
                    if (w.nodeId().equals(nodeId)) {
                        remove(w.workerId());
                    }
                }
            });
            for (Map.Entry<String, String> e : map.entrySet()) {
                upsert(e.getKey(), e.getValue());
            }
            return null;
        });
    }

    public Future<Void> stop() {
        return vertx.executeBlocking(() -> {
            if (entryListener != null) {
                map.removeEntryListener(entryListener);
            }
            if (members != null) {
                members.close();
            }
            return null;
        });
    }

    /** Workers of a role, sorted by id so that round-robin order is stable across replicas. */
    public List<WorkerDescriptor> workers(WorkerRole role) {
        return sorted().byRole().getOrDefault(role, List.of());
    }

    /** Every registered worker, sorted by id. */
    public List<WorkerDescriptor> all() {
        return sorted().all();
    }

    private record Sorted(long version, List<WorkerDescriptor> all, Map<WorkerRole, List<WorkerDescriptor>> byRole) {}

    /** The sorted lists, rebuilt only when the registry changed since they were built. Any thread. */
    private Sorted sorted() {
        long now = version.get();
        Sorted s = sorted;
        if (s != null && s.version() == now) {
            return s;
        }
        // Read after the version: a change racing with this build bumps it, so the result is rebuilt next time.
        List<WorkerDescriptor> all = workers.values().stream()
                .sorted(java.util.Comparator.comparing(WorkerDescriptor::workerId))
                .toList();
        Map<WorkerRole, List<WorkerDescriptor>> byRole = new EnumMap<>(WorkerRole.class);
        for (WorkerRole role : WorkerRole.values()) {
            byRole.put(role, all.stream().filter(w -> w.role() == role).toList());
        }
        s = new Sorted(now, all, byRole);
        sorted = s;
        return s;
    }

    /** {@link System#nanoTime()} when the worker last reported a new decode step, or when it appeared. */
    public long lastProgressNanos(String workerId) {
        return progress.getOrDefault(workerId, Long.MIN_VALUE / 2);
    }

    public WorkerDescriptor get(String workerId) {
        return workers.get(workerId);
    }
}
