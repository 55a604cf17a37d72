package dev.tandem.bridge.console;

import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.ClusterSnapshot;
import dev.tandem.protocol.RouterLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.DoubleSupplier;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The web console's live cluster view: publishes a {@link ClusterSnapshot} of what this router sees to
 * {@link Addresses#CONSOLE_CLUSTER} every period, local-only (the SockJS clients listening are connected
 * here), and only while at least one listens — an idle router does no work for it. Runs on the router's
 * event loop: the SockJS bridge counts listeners there and the timer is set there.
 */
public final class ConsoleFeed {
    private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);
    /** A rate over less than this is mostly noise: a snapshot taken sooner (a new listener) keeps the last rate. */
    private static final long MIN_RATE_WINDOW_NANOS = 200_000_000L;

    /** What a snapshot is made of; read on the router's event loop. */
    public record Sources(
            Function<WorkerRole, List<WorkerView>> workers,
            Supplier<RouterLoad> self,
            Supplier<Collection<RouterLoad>> others,
            IntSupplier inFlight,
            DoubleSupplier requestsEnded,
            DoubleSupplier affinityHits,
            DoubleSupplier affinityMisses) {}

    private final Vertx vertx;
    private final String routerId;
    private final Sources sources;
    private final long periodMs;
    private final LongSupplier nanos;
    private final LongSupplier millis;
    private int listeners;
    private long timer = -1;
    private double lastEnded;
    private long lastNanos;
    private double rate;

    public ConsoleFeed(Vertx vertx, String routerId, Sources sources, long periodMs) {
        this(vertx, routerId, sources, periodMs, System::nanoTime, System::currentTimeMillis);
    }

    ConsoleFeed(Vertx vertx, String routerId, Sources sources, long periodMs, LongSupplier nanos, LongSupplier millis) {
        this.vertx = vertx;
        this.routerId = routerId;
        this.sources = sources;
        this.periodMs = periodMs;
        this.nanos = nanos;
        this.millis = millis;
        resetRate();
    }

    /** A SockJS client now receives the feed: the first one starts the timer; each gets a snapshot at once. */
    public void listenerAdded() {
        if (listeners++ == 0) {
            resetRate();
            timer = vertx.setPeriodic(periodMs, t -> publish());
        }
        publish();
    }

    public void listenerRemoved() {
        if (listeners > 0 && --listeners == 0) {
            cancelTimer();
        }
    }

    int listeners() {
        return listeners;
    }

    /** Stops publishing, whoever still listens (the router is stopping). */
    public void stop() {
        listeners = 0;
        cancelTimer();
    }

    private void cancelTimer() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
            timer = -1;
        }
    }

    private void publish() {
        vertx.eventBus().publish(Addresses.CONSOLE_CLUSTER, ClusterSnapshot.CODEC.encode(snapshot()), LOCAL);
    }

    private void resetRate() {
        lastEnded = sources.requestsEnded().getAsDouble();
        lastNanos = nanos.getAsLong();
        rate = 0;
    }

    /** The cluster now; the request rate covers the time since the previous snapshot. */
    ClusterSnapshot snapshot() {
        long now = nanos.getAsLong();
        double ended = sources.requestsEnded().getAsDouble();
        if (now - lastNanos >= MIN_RATE_WINDOW_NANOS) {
            rate = Math.max(0, ended - lastEnded) * 1e9 / (now - lastNanos);
            lastEnded = ended;
            lastNanos = now;
        }
        RouterLoad self = sources.self().get();
        Collection<RouterLoad> others = sources.others().get();
        List<ClusterSnapshot.Router> routers = new ArrayList<>();
        routers.add(new ClusterSnapshot.Router(self.routerId(), self.nodeId(), self.requestsInFlight(), true));
        for (RouterLoad r : others) {
            routers.add(new ClusterSnapshot.Router(r.routerId(), r.nodeId(), r.requestsInFlight(), false));
        }
        return new ClusterSnapshot(
                routerId,
                millis.getAsLong(),
                sources.inFlight().getAsInt(),
                rate,
                (long) sources.affinityHits().getAsDouble(),
                (long) sources.affinityMisses().getAsDouble(),
                sources.workers().apply(WorkerRole.PREFILL),
                sources.workers().apply(WorkerRole.DECODE),
                routers);
    }
}
