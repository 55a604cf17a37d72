package dev.tandem.bridge.worker;

import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerHeartbeat;
import dev.tandem.protocol.WorkerJoin;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.Future;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.ArrayList;
import java.util.List;

/**
 * A worker in another process that joined over the worker bridge: the addresses the bridge receives
 * on in its name, and its registry entry, kept alive by the bridge's heartbeat with the load the
 * worker last reported. The entry goes when the connection does. Event loop only.
 */
final class ExternalWorker {
    private final String workerId;
    private final WorkerJoin join;
    private final String nodeId;
    private final WorkerAnnouncer announcer;
    private final List<MessageConsumer<Object>> consumers = new ArrayList<>();
    private WorkerHeartbeat last = new WorkerHeartbeat(WorkerLoad.IDLE, false);
    /** Set by the first {@link #leave}: an announce still waiting for its consumers must not start after it. */
    private Future<Void> leaving;

    ExternalWorker(String workerId, WorkerJoin join, String nodeId, WorkerAnnouncer announcer) {
        this.workerId = workerId;
        this.join = join;
        this.nodeId = nodeId;
        this.announcer = announcer;
    }

    /** The addresses a worker of this role receives on: its role's, plus status and drain. */
    static List<String> addresses(WorkerRole role, String workerId) {
        List<String> out = new ArrayList<>();
        if (role == WorkerRole.PREFILL) {
            out.add(Addresses.prefill(workerId));
            out.add(Addresses.prefillCancel(workerId));
        } else {
            out.add(Addresses.decodeKv(workerId));
            out.add(Addresses.decodeStart(workerId));
            out.add(Addresses.decodeCancel(workerId));
        }
        out.add(Addresses.workerStatus(workerId));
        out.add(Addresses.workerDrain(workerId));
        return out;
    }

    String id() {
        return workerId;
    }

    WorkerRole role() {
        return join.role();
    }

    void addConsumer(MessageConsumer<Object> consumer) {
        consumers.add(consumer);
    }

    /**
     * Takes the id in the cluster's registry, marked draining so that no router sends to it before its
     * consumers are in place; false when another worker holds the id.
     */
    Future<Boolean> claim() {
        return announcer.claim(descriptor(true, WorkerLoad.IDLE));
    }

    /** Once every consumer has reached the cluster, the worker is announced: routers may then send to it. */
    Future<Void> announce() {
        return Future.all(consumers.stream().map(MessageConsumer::completion).toList())
                .compose(v -> leaving != null
                        ? Future.<Void>failedFuture("the worker left while joining")
                        : announcer.start(this::descriptor));
    }

    /** A heartbeat from the worker; a change of draining is announced at once, like a Java worker's. */
    void heartbeat(WorkerHeartbeat heartbeat) {
        boolean drainingChanged = heartbeat.draining() != last.draining();
        last = heartbeat;
        if (drainingChanged) {
            announcer.announceNow();
        }
    }

    private WorkerDescriptor descriptor() {
        return descriptor(last.draining(), last.load());
    }

    private WorkerDescriptor descriptor(boolean draining, WorkerLoad load) {
        return new WorkerDescriptor(
                workerId,
                join.role(),
                join.model(),
                join.modelFingerprint(),
                nodeId,
                join.maxBatch(),
                draining,
                load,
                join.kvBlockSize() > 0 ? new CacheSpec(join.kvBlockSize(), false) : null);
    }

    /** Withdraws the registry entry and the consumers; once, whoever asks first (close or shutdown). */
    Future<Void> leave() {
        if (leaving == null) {
            List<Future<Void>> done = new ArrayList<>();
            consumers.forEach(c -> done.add(c.unregister()));
            consumers.clear();
            done.add(announcer.stop());
            leaving = Future.join(done).mapEmpty();
        }
        return leaving;
    }
}
