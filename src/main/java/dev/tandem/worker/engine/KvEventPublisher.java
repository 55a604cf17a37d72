package dev.tandem.worker.engine;

import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.KvCacheEvents;
import dev.tandem.protocol.KvCacheSnapshot;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.Map;

/**
 * Tells every router what a worker's {@link BlockCache} gained and lost: the net changes are published
 * as one numbered {@link KvCacheEvents} batch per period (none when nothing changed), and a router
 * that missed a batch or started late gets a {@link KvCacheSnapshot} consistent with the batches
 * (the pending changes go out as the next batch first). Runs on the worker's event loop.
 */
final class KvEventPublisher {
    /**
     * How long changes gather before a batch goes out: routers learn of a new prefix within this — or
     * within a heartbeat when heartbeats are faster (a sped-up simulation keeps its index as fresh, in
     * simulated time, as its load reports).
     */
    static final long PERIOD_MS = 50;

    private final Vertx vertx;
    private final String workerId;
    private final BlockCache cache;
    private final long periodMs;
    private long seq;
    private long timer = -1;

    KvEventPublisher(Vertx vertx, String workerId, BlockCache cache, long heartbeatMs) {
        this.vertx = vertx;
        this.workerId = workerId;
        this.cache = cache;
        this.periodMs = Math.max(1, Math.min(PERIOD_MS, heartbeatMs));
    }

    /** Starts publishing; the snapshot consumer is returned for the worker to await with its others. */
    MessageConsumer<Object> start() {
        timer = vertx.setPeriodic(periodMs, t -> publish(cache.drainEvents()));
        return vertx.eventBus().consumer(Addresses.kvSnapshot(workerId), m -> {
            Map.Entry<BlockCache.Events, long[]> now = cache.drainWithSnapshot();
            publish(now.getKey());
            m.reply(KvCacheSnapshot.CODEC.encode(new KvCacheSnapshot(workerId, seq, now.getValue())));
        });
    }

    void stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
            timer = -1;
        }
    }

    /** Batches published so far. */
    long seq() {
        return seq;
    }

    private void publish(BlockCache.Events events) {
        if (events.isEmpty()) {
            return;
        }
        seq++;
        vertx.eventBus()
                .publish(
                        Addresses.KV_EVENTS,
                        KvCacheEvents.CODEC.encode(new KvCacheEvents(
                                workerId, seq, System.currentTimeMillis(), events.stored(), events.removed())));
    }
}
