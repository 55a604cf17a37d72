package dev.tandem.worker.upstream;

import dev.tandem.config.KvEventsSettings;
import dev.tandem.metrics.WorkerMetrics;
import dev.tandem.upstream.kvevents.EngineBlockMap;
import dev.tandem.upstream.kvevents.EngineKvBatch;
import dev.tandem.upstream.kvevents.EngineKvEvent;
import dev.tandem.upstream.kvevents.ZmqKvEventSubscriber;
import dev.tandem.worker.kv.KvCacheLedger;
import io.vertx.core.Context;
import io.vertx.core.eventbus.MessageConsumer;

/**
 * An upstream worker's view of its GPU engine's prefix cache: the engine's KV event stream
 * ({@link ZmqKvEventSubscriber}, on its own thread) mapped to Tandem block hashes ({@link EngineBlockMap})
 * and told to the routers as Tandem's own cache events ({@link KvCacheLedger}), one batch per engine
 * batch. Mapping and publishing run on the worker's context.
 */
final class UpstreamKvCache implements EngineBlockMap.Sink {
    /** Engine blocks remembered at most: a GPU engine holds tens of thousands; past this, start over. */
    static final int MAX_ENGINE_BLOCKS = 4_000_000;

    private final Context context;
    private final KvCacheLedger ledger;
    private final EngineBlockMap map;
    private final ZmqKvEventSubscriber subscriber;
    /** Set on stop: batches still on their way change nothing (the routers already forgot this worker). */
    private boolean closed;
    /** For metrics, read from any thread. */
    private volatile int blocks;

    private volatile int lowerBlocks;

    private WorkerMetrics metrics;

    UpstreamKvCache(Context context, String workerId, long fingerprint, int blockSize, KvEventsSettings settings) {
        this.context = context;
        this.ledger = new KvCacheLedger(context.owner().eventBus(), workerId);
        this.map = new EngineBlockMap(fingerprint, blockSize, MAX_ENGINE_BLOCKS);
        this.subscriber = new ZmqKvEventSubscriber(settings, workerId, new ZmqKvEventSubscriber.Listener() {
            @Override
            public void onBatch(EngineKvBatch batch) {
                context.runOnContext(v -> apply(batch));
            }

            @Override
            public void onReset(String why) {
                context.runOnContext(v -> {
                    if (!closed) {
                        map.clear(UpstreamKvCache.this);
                        ledger.publish();
                    }
                });
            }
        });
    }

    /** Starts following the engine; the snapshot consumer is returned for the worker to register. */
    MessageConsumer<Object> start() {
        subscriber.start();
        return ledger.serveSnapshots();
    }

    /** Exports the stream's counters and the blocks it says the engine holds. */
    void register(WorkerMetrics metrics) {
        // Held: the meters read their suppliers through it, weakly.
        this.metrics = metrics;
        metrics.upstreamKvEvents(
                subscriber::batches, subscriber::gaps, subscriber::resets, () -> blocks, () -> lowerBlocks);
    }

    /** On the worker's context, as it stops. */
    void close() {
        closed = true;
        subscriber.close();
    }

    private void apply(EngineKvBatch batch) {
        if (closed) {
            return;
        }
        for (EngineKvEvent event : batch.events()) {
            map.apply(event, this);
        }
        ledger.publish();
        blocks = ledger.size();
        lowerBlocks = ledger.lowerSize();
    }

    @Override
    public void store(long[] hashes, boolean lowerTier) {
        ledger.store(hashes, lowerTier);
    }

    @Override
    public void remove(long[] hashes, boolean lowerTier) {
        ledger.remove(hashes, lowerTier);
    }

    @Override
    public void clear() {
        ledger.clear();
    }
}
