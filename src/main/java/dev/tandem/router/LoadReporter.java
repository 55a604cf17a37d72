package dev.tandem.router;

import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.RouterLoad;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * Publishes this replica's {@link RouterLoad} to the other replicas: a few milliseconds after any
 * change (changes in between are coalesced into one report) and on every heartbeat, so a replica that
 * joins late, or missed a report, is current within one heartbeat. Reports are whole snapshots, not
 * deltas: one lost or reordered message is corrected by the next.
 */
public final class LoadReporter {
    /** How long changes are gathered before one report goes out. */
    public static final long COALESCE_MS = 5;

    private final Vertx vertx;
    private final Context context;
    private final String routerId;
    private final String nodeId;
    private final LoadTracker loads;
    private final IntSupplier requestsInFlight;
    private final long heartbeatMs;
    private final AtomicBoolean pending = new AtomicBoolean();
    private long heartbeatTimer = -1;
    private volatile Supplier<Map<String, RouterLoad.TokenRates>> tokenRates = Map::of;

    public LoadReporter(
            Vertx vertx,
            Context context,
            String routerId,
            String nodeId,
            LoadTracker loads,
            IntSupplier requestsInFlight,
            long heartbeatMs) {
        this.vertx = vertx;
        this.context = context;
        this.routerId = routerId;
        this.nodeId = nodeId;
        this.loads = loads;
        this.requestsInFlight = requestsInFlight;
        this.heartbeatMs = heartbeatMs;
    }

    /** Where the reports' per-model token rates come from (the scaling signals' latest sample); none by default. */
    public void tokenRates(Supplier<Map<String, RouterLoad.TokenRates>> rates) {
        this.tokenRates = rates;
    }

    /** Call on the router's context. */
    public void start() {
        loads.onChange(this::changed);
        heartbeatTimer = vertx.setPeriodic(heartbeatMs, t -> publish());
        publish();
    }

    public void stop() {
        loads.onChange(() -> {});
        if (heartbeatTimer >= 0) {
            vertx.cancelTimer(heartbeatTimer);
        }
    }

    private void changed() {
        if (pending.compareAndSet(false, true)) {
            context.runOnContext(v -> vertx.setTimer(COALESCE_MS, t -> publish()));
        }
    }

    private void publish() {
        pending.set(false);
        RouterLoad report = current();
        vertx.eventBus().publish(Addresses.ROUTER_LOADS, RouterLoad.CODEC.encode(report));
    }

    public RouterLoad current() {
        return new RouterLoad(
                routerId,
                nodeId,
                requestsInFlight.getAsInt(),
                loads.snapshot(),
                loads.prefillTokensSnapshot(),
                tokenRates.get());
    }
}
