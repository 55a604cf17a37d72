package dev.tandem.cluster;

import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.KvCacheEvents;
import dev.tandem.protocol.KvCacheSnapshot;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A worker's side of the KV events protocol, driven by a test: its cache (the truth an index must
 * reach), numbered batches it publishes (or loses), and snapshot requests answered from the cache, or
 * held for the test to answer.
 */
final class FakeKvWorker {
    final String id;
    private final Vertx vertx;
    private final TreeSet<Long> cache = new TreeSet<>();
    private final BlockingQueue<Message<Object>> heldRequests = new LinkedBlockingQueue<>();
    private long seq;
    private long timeMillis = 1_000;
    private volatile boolean holdSnapshots;
    private MessageConsumer<Object> consumer;

    FakeKvWorker(Vertx vertx, String id) {
        this.vertx = vertx;
        this.id = id;
    }

    /** Starts answering snapshot requests at {@link Addresses#kvSnapshot}. */
    FakeKvWorker answering() {
        consumer = vertx.eventBus().consumer(Addresses.kvSnapshot(id), m -> {
            if (holdSnapshots) {
                heldRequests.add(m);
            } else {
                m.reply(KvCacheSnapshot.CODEC.encode(snapshot()));
            }
        });
        consumer.completion().await();
        return this;
    }

    /** Stops answering: a snapshot request then fails at once (no handler). */
    void silent() {
        consumer.unregister().await();
    }

    /** Snapshot requests wait in {@link #nextRequest()} until the test answers them. */
    void holdSnapshots() {
        holdSnapshots = true;
    }

    /** Snapshot requests are answered from the cache again. */
    void answerSnapshots() {
        holdSnapshots = false;
    }

    /** The next snapshot request held, waiting up to 10 s. */
    Message<Object> nextRequest() throws InterruptedException {
        Message<Object> m = heldRequests.poll(10, TimeUnit.SECONDS);
        if (m == null) {
            throw new AssertionError("no snapshot request reached worker " + id);
        }
        return m;
    }

    int requestsHeld() {
        return heldRequests.size();
    }

    /** The cache now, as of the last batch made. */
    synchronized KvCacheSnapshot snapshot() {
        return new KvCacheSnapshot(id, seq, blocks());
    }

    /** The cache's blocks, sorted. */
    synchronized long[] blocks() {
        return cache.stream().mapToLong(Long::longValue).toArray();
    }

    synchronized long seq() {
        return seq;
    }

    synchronized void timeMillis(long time) {
        timeMillis = time;
    }

    /** The next batch: applied to the cache (stored, then removed), not published. */
    synchronized KvCacheEvents batch(long[] stored, long[] removed) {
        for (long b : stored) {
            cache.add(b);
        }
        for (long b : removed) {
            cache.remove(b);
        }
        return new KvCacheEvents(id, ++seq, timeMillis, stored.clone(), removed.clone());
    }

    void publish(KvCacheEvents events) {
        vertx.eventBus().publish(Addresses.KV_EVENTS, KvCacheEvents.CODEC.encode(events));
    }

    /** Makes a batch and publishes it. */
    KvCacheEvents send(long[] stored, long[] removed) {
        KvCacheEvents events = batch(stored, removed);
        publish(events);
        return events;
    }

    KvCacheEvents store(long... blocks) {
        return send(blocks, new long[0]);
    }

    KvCacheEvents remove(long... blocks) {
        return send(new long[0], blocks);
    }

    /** Makes a batch that never reaches anyone: a lost message. */
    KvCacheEvents lose(long[] stored, long[] removed) {
        return batch(stored, removed);
    }
}
