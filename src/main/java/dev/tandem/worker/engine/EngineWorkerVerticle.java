package dev.tandem.worker.engine;

import dev.tandem.cluster.ShutdownDrain;
import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.config.WorkerSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.KvBlockPool;
import dev.tandem.metrics.WorkerMetrics;
import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.ModelCard;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.worker.ModelCards;
import dev.tandem.worker.WorkerControl;
import io.opentelemetry.api.trace.Tracer;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.ArrayList;
import java.util.List;

/**
 * What a prefill and a decode worker that run an in-process engine share: the compute threads, the
 * node's KV pool, a block cache whose changes go out as cache events, the worker control (registry,
 * heartbeat, status, drain) and the descriptor. Each role adds its consumers, its load and its notion
 * of idle.
 */
public abstract class EngineWorkerVerticle extends VerticleBase {
    final String workerId;
    final Engine engine;
    final WorkerSettings settings;
    final WorkerMetrics metrics;
    /** Where the KV this worker computes or receives comes from and goes back to (shared with the node's workers). */
    final KvBlockPool pool;
    /** Where this worker's spans go: children of the router's, through each message's trace context. */
    final Tracer tracer;

    private final ModelCard card;
    private final WorkerAnnouncer announcer;
    private final String nodeId;
    private final WorkerRole role;

    WorkerExecutor compute;
    /** Blocks kept for prompts that share their prefix: a prefill worker's prefix cache, a decode worker's kept KV. */
    BlockCache cache;

    private WorkerControl control;
    private KvEventPublisher events;

    EngineWorkerVerticle(WorkerRole role, String workerId, EngineWorkerSetup setup) {
        this.role = role;
        this.workerId = workerId;
        this.engine = setup.engine();
        this.card = ModelCards.of(engine);
        this.settings = setup.settings();
        this.announcer = setup.announcer().get();
        this.nodeId = setup.nodeId();
        this.metrics = setup.metrics().apply(workerId);
        this.pool = setup.pool();
        this.tracer = setup.tracer();
    }

    @Override
    public final Future<?> start() {
        cache = new BlockCache(engine.kvLayout(), engine.info().fingerprint(), cacheBytes());
        compute = vertx.createSharedWorkerExecutor(
                "tandem-" + role.name().toLowerCase(java.util.Locale.ROOT) + "-" + workerId, computeThreads());
        events = new KvEventPublisher(vertx, workerId, cache, settings.heartbeatMs());
        metrics.kvCache(cache::bytes, cache::blocks, cache::evictions);
        metrics.kvCapacity(cacheBytes());
        List<MessageConsumer<?>> consumers = new ArrayList<>(roleConsumers(vertx.eventBus()));
        consumers.add(events.start());
        control = new WorkerControl(vertx, workerId, announcer, this::descriptor);
        return control.start(consumers);
    }

    @Override
    public final Future<?> stop() {
        events.stop();
        return control.stop().eventually(() -> compute.close());
    }

    /** The bytes this worker's block cache may hold (its share of the node's KV budget). */
    abstract long cacheBytes();

    /** Threads computing for this worker. */
    abstract int computeThreads();

    /** Requests this worker runs at once, as its descriptor announces them. */
    abstract int capacity();

    /** Sets up the role's state and returns the consumers of its addresses; called once the cache and compute exist. */
    abstract List<MessageConsumer<?>> roleConsumers(EventBus bus);

    abstract WorkerLoad load();

    /** Whether it holds no request any more (a shutdown drain waits for this). */
    abstract boolean idle();

    /** A router on a cluster member that left will never read what this worker computes for it. */
    public abstract void onRouterNodeLeft(String nodeId);

    /** This worker as it is now: its registry entry, heartbeat and status answer. */
    public final WorkerDescriptor descriptor() {
        return new WorkerDescriptor(
                workerId,
                role,
                engine.info().name(),
                engine.info().fingerprint(),
                nodeId,
                capacity(),
                control.draining(),
                load(),
                cacheBytes() > 0
                        ? new CacheSpec(
                                engine.kvLayout().blockSize(),
                                role == WorkerRole.DECODE,
                                engine.kvLayout().blockBytes())
                        : null,
                card);
    }

    /** Drains before a shutdown: no new requests, waits (up to the timeout) for those it holds. */
    public final Future<Void> drainForShutdown(long timeoutMs) {
        return ShutdownDrain.run(context, control::startDraining, this::idle, timeoutMs);
    }
}
