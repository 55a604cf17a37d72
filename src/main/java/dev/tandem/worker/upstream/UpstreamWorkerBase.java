package dev.tandem.worker.upstream;

import dev.tandem.cluster.ShutdownDrain;
import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.config.UpstreamSettings;
import dev.tandem.config.WorkerSettings;
import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.upstream.TokenizeService;
import dev.tandem.upstream.UpstreamClient;
import dev.tandem.upstream.UpstreamFlow;
import dev.tandem.upstream.UpstreamModel;
import dev.tandem.upstream.UpstreamMonitor;
import dev.tandem.worker.WorkerControl;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * What a prefill and a decode worker of engine {@code openai} share: the upstream client, flow and
 * monitor, the worker control, a re-announce when the upstream's load changes, and a descriptor that
 * shows an unhealthy upstream as draining. Each role adds its own consumers and load.
 */
abstract class UpstreamWorkerBase extends VerticleBase {
    final String workerId;
    final UpstreamModel model;
    final UpstreamSettings upstream;
    final WorkerSettings settings;
    final WorkerAnnouncer announcer;
    final String nodeId;
    private final UpstreamWorkerSetup setup;
    UpstreamClient client;
    UpstreamFlow flow;
    UpstreamMonitor monitor;
    WorkerControl control;
    /** The engine's prefix cache from its KV events, or null when none are configured. */
    UpstreamKvCache kvCache;

    private boolean announced;

    UpstreamWorkerBase(String workerId, UpstreamWorkerSetup setup) {
        this.workerId = workerId;
        this.model = setup.model();
        this.upstream = setup.upstream();
        this.settings = setup.settings();
        this.announcer = setup.announcer().get();
        this.nodeId = setup.nodeId();
        this.setup = setup;
    }

    @Override
    public final Future<?> start() {
        client = new UpstreamClient(vertx, upstream);
        flow = UpstreamFlow.of(upstream);
        monitor = new UpstreamMonitor(vertx, client, upstream.pollMs(), this::loadChanged);
        control = new WorkerControl(vertx, workerId, announcer, this::descriptor);
        monitor.start();
        List<MessageConsumer<?>> consumers = new ArrayList<>(roleConsumers(vertx.eventBus()));
        consumers.add(TokenizeService.serve(vertx, client, model.name()));
        if (upstream.kvEvents().enabled()) {
            kvCache = new UpstreamKvCache(
                    context, workerId, model.fingerprint(), settings.kvBlockSize(), upstream.kvEvents());
            consumers.add(kvCache.start());
            kvCache.register(setup.metrics().apply(workerId));
        }
        return control.start(consumers).onSuccess(v -> announced = true);
    }

    @Override
    public final Future<?> stop() {
        monitor.stop();
        if (kvCache != null) {
            kvCache.close();
        }
        cancelAll();
        return control.stop().eventually(() -> client.close());
    }

    /** The consumers of this worker's role; the tokenize service is added to them. */
    abstract List<MessageConsumer<?>> roleConsumers(EventBus bus);

    /** Stops the upstream work in flight, on stop. */
    abstract void cancelAll();

    public abstract WorkerDescriptor descriptor();

    /** Announce only once started: before that the control has not registered this worker. */
    private void loadChanged() {
        if (announced) {
            announcer.announceNow();
        }
    }

    /** This worker's descriptor; an unhealthy upstream shows as draining, so routers send nothing new. */
    WorkerDescriptor descriptor(WorkerRole role, int capacity, WorkerLoad load) {
        return new WorkerDescriptor(
                workerId,
                role,
                model.name(),
                model.fingerprint(),
                nodeId,
                capacity,
                control.draining() || !monitor.healthy(),
                load,
                // With the engine's KV events, routers see its prefix cache in Tandem's blocks.
                kvCache == null ? null : new CacheSpec(settings.kvBlockSize(), false),
                model.card());
    }

    Future<Void> drain(BooleanSupplier idle, long timeoutMs) {
        return ShutdownDrain.run(context, control::startDraining, idle, timeoutMs);
    }
}
