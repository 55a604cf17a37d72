package dev.tandem.worker;

import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.JsonCodec;
import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerFailure;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * What every worker has besides its role: the status and drain addresses, and its presence in the
 * registry. A draining worker stays registered (so its running requests keep their route) but says
 * so, and routers send it nothing new. Runs on the worker's event loop.
 */
public final class WorkerControl {
    private final Vertx vertx;
    private final String workerId;
    private final WorkerAnnouncer announcer;
    private final Supplier<WorkerDescriptor> descriptor;
    private boolean draining;

    /** @param descriptor the worker as it is now: announced on every heartbeat, the answer to status and drain */
    public WorkerControl(
            Vertx vertx, String workerId, WorkerAnnouncer announcer, Supplier<WorkerDescriptor> descriptor) {
        this.vertx = vertx;
        this.workerId = workerId;
        this.announcer = announcer;
        this.descriptor = descriptor;
    }

    public boolean draining() {
        return draining;
    }

    /**
     * Adds the status and drain consumers to the role's own, and once all of them have reached the
     * cluster, announces the worker (the descriptor is asked again on every heartbeat).
     */
    public Future<Void> start(List<MessageConsumer<?>> roleConsumers) {
        List<MessageConsumer<?>> consumers = new ArrayList<>(roleConsumers);
        consumers.add(vertx.eventBus()
                .consumer(
                        Addresses.workerStatus(workerId),
                        m -> m.reply(WorkerDescriptor.CODEC.encode(descriptor.get()))));
        consumers.add(vertx.eventBus().<Object>consumer(Addresses.workerDrain(workerId), this::onDrain));
        List<Future<Void>> ready = new ArrayList<>();
        consumers.forEach(c -> ready.add(c.completion()));
        return Future.all(ready).compose(v -> announcer.start(descriptor));
    }

    /**
     * Drains before a shutdown: says so in the registry, so routers send nothing new. Not waited for:
     * the drain's deadline runs from now, and an unhealthy cluster must not stretch it.
     */
    public void startDraining() {
        draining = true;
        announcer.announceNow();
    }

    /** Leaves the registry at once, so routers stop scheduling onto this worker. */
    public Future<Void> stop() {
        return announcer.stop();
    }

    private void onDrain(Message<Object> message) {
        Object flag;
        try {
            flag = JsonCodec.object(message.body()).getValue("draining");
        } catch (ProtocolException e) {
            message.fail(WorkerFailure.BAD_REQUEST.code(), e.getMessage());
            return;
        }
        if (!(flag instanceof Boolean on)) {
            message.fail(WorkerFailure.BAD_REQUEST.code(), "field 'draining' must be a boolean");
            return;
        }
        draining = on;
        announcer.announceNow().onComplete(ar -> {
            if (ar.succeeded()) {
                message.reply(WorkerDescriptor.CODEC.encode(descriptor.get()));
            } else {
                message.fail(
                        WorkerFailure.INTERNAL.code(),
                        "registry not updated: " + ar.cause().getMessage());
            }
        });
    }
}
