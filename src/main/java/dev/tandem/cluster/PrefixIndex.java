package dev.tandem.cluster;

import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.JsonCodec;
import dev.tandem.protocol.KvCacheEvents;
import dev.tandem.protocol.KvCacheSnapshot;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Which worker's KV caches hold which prompt block, from the {@link KvCacheEvents} every worker
 * publishes: what prefix-aware scheduling asks per request. Each worker's batches are applied in
 * sequence order; a worker first seen after its first batch, or a skipped batch, makes the index ask
 * that worker for a {@link KvCacheSnapshot} and hold its batches until the answer, then replace what it
 * knew of the worker and replay the held batches newer than the snapshot. A failed snapshot forgets the
 * worker until its next batch, which asks again: the index may know too little, never something
 * wrong for long. Blocks in a worker's lower cache tier ({@link KvCacheEvents#storedLower}) are kept
 * apart: a prompt's run of leading blocks may continue through them, each counting {@code lowerTierHit}
 * of a block. It holds at most {@code maxEntries} block→worker pairs (its share of the memory
 * budget); blocks past it are not recorded ({@link #dropped}) until removals make room.
 *
 * <p>Confined to the owning verticle's context: events, snapshot answers, {@link #forgetWorker} and the
 * queries all run there, without locks. The counters for metrics may be read from any thread.
 */
public final class PrefixIndex {
    private static final Logger LOG = Logger.getLogger(PrefixIndex.class.getName());

    /** How long a worker has to answer a snapshot request. */
    public static final long SNAPSHOT_TIMEOUT_MS = 5_000;
    /** Batches held per worker while its snapshot is in flight; beyond, they are dropped and it asks again. */
    public static final int MAX_BUFFERED = 1_000;

    /** Snapshots asked for again in a row, each still leaving a gap, before the worker is forgotten instead. */
    static final int MAX_RETRIES = 3;

    private final Vertx vertx;
    private final Context context;
    private final long snapshotTimeoutMs;
    private final int maxBuffered;
    private final LongSupplier clock;
    private final long maxEntries;
    private final double lowerTierHit;
    private final Map<String, IndexedWorker> index = new HashMap<>();
    /** Workers whose last snapshot failed: warned about once, until one succeeds. */
    private final Set<String> unanswered = new HashSet<>();

    private volatile long entries;
    private volatile int workers;
    private volatile long lagMillis;
    private volatile long snapshots;
    private volatile long gaps;
    private volatile long dropped;
    private long malformed;

    private MessageConsumer<Object> consumer;

    /**
     * @param maxEntries   the most block→worker pairs held
     * @param lowerTierHit what a block held only in a worker's lower tier counts for, 0 to 1
     */
    public PrefixIndex(Vertx vertx, Context context, long maxEntries, double lowerTierHit) {
        this(vertx, context, SNAPSHOT_TIMEOUT_MS, MAX_BUFFERED, System::currentTimeMillis, maxEntries, lowerTierHit);
    }

    PrefixIndex(
            Vertx vertx,
            Context context,
            long snapshotTimeoutMs,
            int maxBuffered,
            LongSupplier clock,
            long maxEntries,
            double lowerTierHit) {
        this.vertx = vertx;
        this.lowerTierHit = lowerTierHit;
        this.maxEntries = maxEntries;
        this.context = context;
        this.snapshotTimeoutMs = snapshotTimeoutMs;
        this.maxBuffered = maxBuffered;
        this.clock = clock;
    }

    /** Subscribes to {@link Addresses#KV_EVENTS} on the owning context; completes once registered. */
    public Future<Void> start() {
        return onContext(() -> {
            consumer = vertx.eventBus().consumer(Addresses.KV_EVENTS, m -> receive(m.body()));
            return consumer.completion();
        });
    }

    /** Unsubscribes and forgets everything; snapshot answers still on their way are ignored. */
    public Future<Void> stop() {
        return onContext(() -> {
            Future<Void> unregistered = consumer == null ? Future.succeededFuture() : consumer.unregister();
            consumer = null;
            index.clear();
            unanswered.clear();
            publishSizes();
            return unregistered;
        });
    }

    private <T> Future<T> onContext(Supplier<Future<T>> action) {
        if (Vertx.currentContext() == context) {
            return action.get();
        }
        Promise<T> done = Promise.promise();
        context.runOnContext(v -> action.get().onComplete(done));
        return done.future();
    }

    private void receive(Object body) {
        KvCacheEvents events;
        try {
            events = KvCacheEvents.CODEC.decode(JsonCodec.object(body));
        } catch (RuntimeException e) {
            Level level = malformed++ == 0 ? Level.WARNING : Level.FINE;
            LOG.log(level, "dropping malformed KV cache events: " + e.getMessage());
            return;
        }
        accept(events, clock.getAsLong());
    }

    /** One batch of a worker's events, received at {@code receivedMillis} (wall clock). */
    void accept(KvCacheEvents events, long receivedMillis) {
        IndexedWorker.Received batch = new IndexedWorker.Received(events, receivedMillis);
        long seq = events.seq();
        IndexedWorker w = index.get(events.workerId());
        if (w == null) {
            w = new IndexedWorker(events.workerId());
            index.put(w.id, w);
            publishSizes();
            if (seq == 1) {
                // Before its first batch a worker's caches are empty: nothing to ask.
                apply(w, batch);
                return;
            }
            hold(w, batch);
            requestSnapshot(w);
        } else if (w.syncing != null) {
            hold(w, batch);
        } else if (seq == w.last + 1) {
            apply(w, batch);
        } else if (seq > w.last + 1) {
            gaps++;
            long last = w.last;
            LOG.fine(() -> "worker " + events.workerId() + " skipped from batch " + last + " to " + seq);
            hold(w, batch);
            requestSnapshot(w);
        }
        // else: a duplicate or an older batch, already reflected
    }

    private void hold(IndexedWorker w, IndexedWorker.Received batch) {
        if (w.held.size() >= maxBuffered && !w.held.containsKey(batch.events().seq())) {
            LOG.warning("more than " + maxBuffered + " KV event batches from worker " + w.id
                    + " arrived while its snapshot was on its way; dropping them and asking again");
            // The batch kept opens a gap after the snapshot if the snapshot predates the ones dropped.
            w.held.clear();
        }
        w.held.put(batch.events().seq(), batch);
    }

    private void apply(IndexedWorker w, IndexedWorker.Received batch) {
        KvCacheEvents e = batch.events();
        applyTier(w.blocks, e.stored(), e.removed());
        applyTier(w.lower, e.storedLower(), e.removedLower());
        w.last = e.seq();
        lagMillis = batch.receivedMillis() - e.timeMillis();
    }

    /** One tier's stores and removals, counted in {@link #entries}. */
    private void applyTier(LongHashSet blocks, long[] stored, long[] removed) {
        long delta = 0;
        // The batch's removals make room for its stores, applied before them.
        long room = maxEntries - entries;
        for (long block : removed) {
            room += blocks.contains(block) ? 1 : 0;
        }
        for (long block : stored) {
            if (delta >= room && !blocks.contains(block)) {
                dropped++;
            } else if (blocks.add(block)) {
                delta++;
            }
        }
        for (long block : removed) {
            if (blocks.remove(block)) {
                delta--;
            }
        }
        entries += delta;
    }

    private void requestSnapshot(IndexedWorker w) {
        Object attempt = new Object();
        w.syncing = attempt;
        snapshots++;
        vertx.eventBus()
                .request(
                        Addresses.kvSnapshot(w.id),
                        new JsonObject(),
                        new DeliveryOptions().setSendTimeout(snapshotTimeoutMs))
                .map(reply -> KvCacheSnapshot.CODEC.decode(JsonCodec.object(reply.body())))
                .onComplete(
                        snapshot -> context.runOnContext(v -> onSnapshot(w, attempt, snapshot)),
                        failure -> context.runOnContext(v -> onSnapshotFailed(w, attempt, failure)));
    }

    /** True while {@code attempt} is the worker's snapshot request and the worker has not been forgotten. */
    private boolean current(IndexedWorker w, Object attempt) {
        return index.get(w.id) == w && w.syncing == attempt;
    }

    private void onSnapshot(IndexedWorker w, Object attempt, KvCacheSnapshot snapshot) {
        if (!current(w, attempt)) {
            return;
        }
        if (!snapshot.workerId().equals(w.id)) {
            giveUp(w, "the snapshot is of worker " + snapshot.workerId());
            return;
        }
        unanswered.remove(w.id);
        w.syncing = null;
        entries -= w.blocks.size() + w.lower.size();
        w.blocks = bounded(snapshot.blocks());
        w.lower = bounded(snapshot.lowerBlocks());
        w.last = snapshot.seq();
        replayHeld(w);
    }

    /** A snapshot's blocks, as many as the bound leaves room for, counted in {@link #entries}. */
    private LongHashSet bounded(long[] held) {
        int kept = (int) Math.max(0, Math.min(held.length, maxEntries - entries));
        dropped += held.length - kept;
        LongHashSet blocks = new LongHashSet(kept);
        for (int i = 0; i < kept; i++) {
            blocks.add(held[i]);
        }
        entries += blocks.size();
        return blocks;
    }

    /** Applies the batches held during a snapshot, in order, from the one after it; a gap asks again. */
    private void replayHeld(IndexedWorker w) {
        while (!w.held.isEmpty()) {
            Map.Entry<Long, IndexedWorker.Received> first = w.held.firstEntry();
            long seq = first.getKey();
            if (seq > w.last + 1) {
                gaps++;
                if (++w.retries > MAX_RETRIES) {
                    // A worker that keeps answering from before the batches it sent would be asked forever.
                    giveUp(w, "its snapshots, the last at batch " + w.last + ", keep predating batch " + seq);
                } else {
                    requestSnapshot(w);
                }
                return;
            }
            w.held.pollFirstEntry();
            if (seq == w.last + 1) {
                apply(w, first.getValue());
            }
        }
        w.retries = 0;
    }

    private void onSnapshotFailed(IndexedWorker w, Object attempt, Throwable failure) {
        if (current(w, attempt)) {
            giveUp(w, failure.getMessage());
        }
    }

    private void giveUp(IndexedWorker w, String why) {
        Level level = unanswered.add(w.id) ? Level.WARNING : Level.FINE;
        LOG.log(
                level,
                "no usable KV cache snapshot from worker " + w.id + " (" + why
                        + "); forgetting its blocks until its next batch of events");
        drop(w.id);
    }

    /** Drops everything known of a worker (it left); a batch it sends later starts it over. */
    public void forgetWorker(String workerId) {
        unanswered.remove(workerId);
        drop(workerId);
    }

    private void drop(String workerId) {
        IndexedWorker w = index.remove(workerId);
        if (w != null) {
            entries -= w.blocks.size() + w.lower.size();
            publishSizes();
        }
    }

    private void publishSizes() {
        workers = index.size();
        if (index.isEmpty()) {
            entries = 0;
        }
    }

    /** How many of {@code promptHashes}, from the first, the worker's caches hold (0 for a worker unknown). */
    public int leadingBlocks(String workerId, long[] promptHashes) {
        IndexedWorker w = index.get(workerId);
        return w == null ? 0 : w.leading(promptHashes, lowerTierHit);
    }

    /**
     * For every worker that holds at least the first of {@code promptHashes}: how many, from the first,
     * its caches hold. Workers holding none are left out. A new map the caller may keep.
     */
    public Map<String, Integer> leadingBlocks(long[] promptHashes) {
        Map<String, Integer> out = new HashMap<>();
        if (promptHashes.length == 0) {
            return out;
        }
        for (IndexedWorker w : index.values()) {
            if (w.holds(promptHashes[0])) {
                out.put(w.id, w.leading(promptHashes, lowerTierHit));
            }
        }
        return out;
    }

    /** Block→worker pairs held. */
    public long entries() {
        return entries;
    }

    /** Workers the index knows of, including those whose snapshot is on its way. */
    public int workers() {
        return workers;
    }

    /** For the most recent batch applied, its receipt time minus its send time (worker's clock), in ms. */
    public long lastEventLagMillis() {
        return lagMillis;
    }

    /** Snapshots asked for so far. */
    public long snapshots() {
        return snapshots;
    }

    /** Blocks not recorded so far because the index was at its bound. */
    public long dropped() {
        return dropped;
    }

    /** Gaps seen so far: batches that skipped one or more sequence numbers. */
    public long gaps() {
        return gaps;
    }

    /** The blocks the index holds for a worker, sorted (for tests). */
    long[] blocks(String workerId) {
        IndexedWorker w = index.get(workerId);
        long[] out = w == null ? new long[0] : w.blocks.toArray();
        java.util.Arrays.sort(out);
        return out;
    }

    /** The last batch applied for a worker, or -1 when unknown (for tests). */
    long lastSeq(String workerId) {
        IndexedWorker w = index.get(workerId);
        return w == null ? -1 : w.last;
    }

    /** The sequence numbers of the batches held for a worker while its snapshot is on its way (for tests). */
    List<Long> held(String workerId) {
        return index.containsKey(workerId)
                ? List.copyOf(index.get(workerId).held.keySet())
                : List.of();
    }
}
