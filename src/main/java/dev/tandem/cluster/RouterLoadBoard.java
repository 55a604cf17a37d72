package dev.tandem.cluster;

import com.hazelcast.core.HazelcastInstance;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.JsonCodec;
import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.RouterLoad;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Logger;

/**
 * What the other router replicas have in flight on each worker, from the reports they publish, so
 * least-loaded scheduling counts every replica's dispatches and not only this one's. A replica's report
 * goes the moment its cluster member leaves, or when it has not been refreshed for {@code ttlMs} (a
 * replica stuck or partitioned away): a dead router leaves no phantom load behind.
 *
 * <p>Confined to the owning verticle's context: reports, sweeps and reads all run there.
 */
public final class RouterLoadBoard {
    private static final Logger LOG = Logger.getLogger(RouterLoadBoard.class.getName());

    private record Entry(RouterLoad load, long receivedNanos) {}

    private final Vertx vertx;
    private final Context context;
    private final HazelcastInstance hazelcast;
    private final String self;
    private final long ttlMs;
    private final Map<String, Entry> reports = new HashMap<>();
    /** Sum over live reports, per worker: what scheduling reads. */
    private final Map<String, Integer> totals = new HashMap<>();

    private final Map<String, Long> tokenTotals = new HashMap<>();

    private MessageConsumer<Object> consumer;
    private MemberWatch members;
    private long sweepTimer = -1;

    public RouterLoadBoard(Vertx vertx, Context context, HazelcastInstance hazelcast, String selfRouterId, long ttlMs) {
        this.vertx = vertx;
        this.context = context;
        this.hazelcast = hazelcast;
        this.self = selfRouterId;
        this.ttlMs = ttlMs;
    }

    /** Call on the owning context. */
    public Future<Void> start() {
        consumer = vertx.eventBus().consumer(Addresses.ROUTER_LOADS, m -> {
            try {
                accept(RouterLoad.CODEC.decode(JsonCodec.object(m.body())), System.nanoTime());
            } catch (ProtocolException e) {
                LOG.warning("dropping malformed router load report: " + e.getMessage());
            }
        });
        sweepTimer = vertx.setPeriodic(Math.max(50, ttlMs / 4), t -> sweep(System.nanoTime()));
        return consumer.completion()
                .compose(v -> vertx.executeBlocking(() -> {
                    members = MemberWatch.onLeave(hazelcast, node -> context.runOnContext(x -> dropNode(node)));
                    return null;
                }));
    }

    public Future<Void> stop() {
        if (sweepTimer >= 0) {
            vertx.cancelTimer(sweepTimer);
        }
        Future<Void> unregistered = consumer == null ? Future.succeededFuture() : consumer.unregister();
        return unregistered.compose(v -> vertx.executeBlocking(() -> {
            if (members != null) {
                members.close();
            }
            return null;
        }));
    }

    void accept(RouterLoad load, long nowNanos) {
        if (load.routerId().equals(self)) {
            return;
        }
        reports.put(load.routerId(), new Entry(load, nowNanos));
        recount();
    }

    void sweep(long nowNanos) {
        long ttlNanos = ttlMs * 1_000_000;
        if (reports.values().removeIf(e -> nowNanos - e.receivedNanos > ttlNanos)) {
            recount();
        }
    }

    void dropNode(String nodeId) {
        if (reports.values().removeIf(e -> e.load.nodeId().equals(nodeId))) {
            LOG.info("router replica on member " + nodeId + " left; its load is no longer counted");
            recount();
        }
    }

    private void recount() {
        totals.clear();
        tokenTotals.clear();
        for (Entry e : reports.values()) {
            e.load.inFlight().forEach((worker, n) -> totals.merge(worker, n, Integer::sum));
            e.load.prefillTokens().forEach((worker, n) -> tokenTotals.merge(worker, n, Long::sum));
        }
    }

    /** Prompt tokens the other live replicas have sent a worker to prefill and not yet seen prefilled. */
    public long othersPrefillTokens(String workerId) {
        return tokenTotals.getOrDefault(workerId, 0L);
    }

    /** Requests the other live replicas have in flight on a worker. */
    public int othersInFlight(String workerId) {
        return totals.getOrDefault(workerId, 0);
    }

    /** The other replicas' latest reports. */
    public List<RouterLoad> reports() {
        return reports.values().stream().map(Entry::load).toList();
    }

    /** Every live router replica's load as this one sees it: its own ({@code self}), and the others' latest reports. */
    public io.vertx.core.json.JsonObject view(RouterLoad self) {
        io.vertx.core.json.JsonArray out = new io.vertx.core.json.JsonArray()
                .add(RouterLoad.CODEC.encode(self).put("self", true));
        for (RouterLoad r : reports()) {
            out.add(RouterLoad.CODEC.encode(r).put("self", false));
        }
        return new io.vertx.core.json.JsonObject().put("routers", out);
    }
}
