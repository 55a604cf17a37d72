package dev.tandem.worker.kv;

import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.KvCacheEvents;
import dev.tandem.protocol.KvCacheSnapshot;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The blocks of a cache Tandem does not run itself — an external worker's, a GPU engine's — as its
 * owner learns of them, told to every router as Tandem's own numbered {@link KvCacheEvents}: stores and
 * removals gather per tier until {@link #publish}, which sends their net change as the next batch (none
 * when nothing changed), and a router's snapshot request is answered from the blocks held, consistent
 * with the batches sent. Confined to its owner's context.
 */
public final class KvCacheLedger {
    /** One tier's blocks and what changed in them since the last batch. */
    private static final class Tier {
        final Set<Long> held = new LinkedHashSet<>();
        final Set<Long> stored = new LinkedHashSet<>();
        final Set<Long> removed = new LinkedHashSet<>();

        void store(long h) {
            if (held.add(h) && !removed.remove(h)) {
                stored.add(h);
            }
        }

        void remove(long h) {
            if (held.remove(h) && !stored.remove(h)) {
                removed.add(h);
            }
        }

        boolean changed() {
            return !stored.isEmpty() || !removed.isEmpty();
        }
    }

    private final EventBus eventBus;
    private final String workerId;
    private final Tier first = new Tier();
    private final Tier lower = new Tier();
    private long seq;

    public KvCacheLedger(EventBus eventBus, String workerId) {
        this.eventBus = eventBus;
        this.workerId = workerId;
    }

    /** Answers routers' snapshot requests for this worker until the consumer is unregistered. */
    public MessageConsumer<Object> serveSnapshots() {
        return eventBus.consumer(Addresses.kvSnapshot(workerId), this::snapshot);
    }

    /** Blocks now held, in the first tier or (an engine's offloaded blocks) the lower one. */
    public void store(long[] hashes, boolean inLower) {
        Tier tier = inLower ? lower : first;
        for (long h : hashes) {
            tier.store(h);
        }
    }

    /** Blocks no longer held in that tier; those it did not hold are ignored. */
    public void remove(long[] hashes, boolean inLower) {
        Tier tier = inLower ? lower : first;
        for (long h : hashes) {
            tier.remove(h);
        }
    }

    /** Everything gone, in both tiers. */
    public void clear() {
        for (Tier tier : new Tier[] {first, lower}) {
            for (Long h : tier.held.toArray(new Long[0])) {
                tier.remove(h);
            }
        }
    }

    /** Sends the changes since the last batch as the next one, if anything changed; returns the last batch's number. */
    public long publish() {
        if (first.changed() || lower.changed()) {
            seq++;
            eventBus.publish(
                    Addresses.KV_EVENTS,
                    KvCacheEvents.CODEC.encode(new KvCacheEvents(
                            workerId,
                            seq,
                            System.currentTimeMillis(),
                            drain(first.stored),
                            drain(first.removed),
                            drain(lower.stored),
                            drain(lower.removed))));
        }
        return seq;
    }

    /** Blocks held in the first tier (for tests and metrics). */
    public int size() {
        return first.held.size();
    }

    /** Blocks held in the lower tier. */
    public int lowerSize() {
        return lower.held.size();
    }

    private void snapshot(Message<Object> request) {
        publish();
        request.reply(
                KvCacheSnapshot.CODEC.encode(new KvCacheSnapshot(workerId, seq, array(first.held), array(lower.held))));
    }

    private static long[] drain(Set<Long> hashes) {
        long[] out = array(hashes);
        hashes.clear();
        return out;
    }

    private static long[] array(Set<Long> hashes) {
        return hashes.stream().mapToLong(Long::longValue).toArray();
    }
}
