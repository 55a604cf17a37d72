package dev.tandem.bench;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The soak's open loop: Poisson arrivals at {@code rate} per second for {@code minutes}, after a warm-up
 * whose rate ramps from a tenth of it, then holds it (its requests belong to minute -1: a JIT-cold target refused
 * requests in its first minute at rates it then served without error), each request drawn
 * from the {@link SoakMix} and sent over its transport, on one Vert.x context (so the mix, the sessions
 * and the sockets need no locks). Arrival times are drawn ahead, not timer after timer, so timer slack
 * does not slow the rate. A request due while {@code maxInFlight} are open is not sent: it is an
 * {@link SoakError#IN_FLIGHT_CAP} error, so a stuck target cannot grow the client without bound. Each sent
 * request has {@code timeoutMs} to end. Outcomes are readable from any thread as they come.
 *
 * <p>The bench's own full GC of the target must not land on requests (with 1.4 GB live it paused the target
 * for 350–570 ms): {@link #pause} stops the arrivals and waits until none is open, {@link #resume} goes on
 * where they stopped. Arrivals run on a clock that stands still while paused, so the rate and the minutes
 * leave the quiet gaps out.
 */
final class SoakTraffic {
    /** What the traffic does; a "minute" is {@code minuteMillis} long (60,000 but in tests). */
    record Plan(
            double rate,
            int minutes,
            long minuteMillis,
            int maxInFlight,
            long timeoutMs,
            long seed,
            long warmupMillis) {}

    /** The minute of the requests sent during the warm-up. */
    static final int WARM_UP = -1;

    /** Sends one request over the transport its kind names. */
    interface Transport {
        SoakCall send(SoakRequest r);
    }

    private final Vertx vertx;
    private final Context context;
    private final Plan plan;
    private final Transport transport;
    private final SoakMix mix;
    private final Random arrivals;
    private final Queue<SoakOutcome> outcomes = new ConcurrentLinkedQueue<>();
    private final AtomicIntegerArray started;
    private final AtomicLong open = new AtomicLong();
    private final CompletableFuture<Void> drained = new CompletableFuture<>();
    private long startNanos;
    private double nextArrivalNanos;
    private long index;
    private boolean arrivalsOver;
    /** Time spent paused so far: the arrivals' clock is {@code System.nanoTime()} minus it. */
    private volatile long pausedNanos;

    private long pausedAt = -1;
    private long timer = -1;
    private CompletableFuture<Void> quiet;

    SoakTraffic(Vertx vertx, Context context, Plan plan, SoakMix mix, Transport transport) {
        this.vertx = vertx;
        this.context = context;
        this.plan = plan;
        this.mix = mix;
        this.transport = transport;
        // Not Random(seed) itself: the mix draws from that, and two equal streams would tie each request's
        // kind to the gap before it. SplittableRandom mixes the seed into an unrelated one.
        this.arrivals = new Random(new SplittableRandom(plan.seed()).nextLong());
        this.started = new AtomicIntegerArray(plan.minutes());
    }

    /** Starts the arrivals now; returns the start of the measured minutes, in {@link System#nanoTime()}. */
    long start() {
        startNanos = System.nanoTime();
        nextArrivalNanos = startNanos + gapNanos(startNanos);
        context.runOnContext(v -> arrive());
        return measuredNanos();
    }

    private long measuredNanos() {
        return startNanos + plan.warmupMillis() * 1_000_000L;
    }

    /** Completes once the last arrival is past and every request sent has ended. */
    CompletableFuture<Void> drained() {
        return drained;
    }

    /** Requests due in each minute so far (sent or refused for the cap). */
    int startedIn(int minute) {
        return started.get(minute);
    }

    long open() {
        return open.get();
    }

    /** The outcomes so far, in the order they ended. */
    List<SoakOutcome> outcomes() {
        return List.copyOf(outcomes);
    }

    private long endNanos() {
        return measuredNanos() + plan.minutes() * plan.minuteMillis() * 1_000_000L;
    }

    /** Stops sending; completes once no request is open. Call {@link #resume} after. */
    CompletableFuture<Void> pause() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        context.runOnContext(v -> {
            pausedAt = System.nanoTime();
            vertx.cancelTimer(timer);
            quiet = done;
            checkQuiet();
        });
        return done;
    }

    /** Sends again, from where the arrivals stopped. */
    void resume() {
        context.runOnContext(v -> {
            pausedNanos += System.nanoTime() - pausedAt;
            pausedAt = -1;
            quiet = null;
            arrive();
        });
    }

    /** How long the traffic has been paused in all, so far (read between a resume and the next pause). */
    long pausedNanos() {
        return pausedNanos;
    }

    private void checkQuiet() {
        if (quiet != null && open.get() == 0) {
            quiet.complete(null);
        }
    }

    private void arrive() {
        if (pausedAt >= 0 || arrivalsOver) {
            return;
        }
        long now = System.nanoTime() - pausedNanos;
        while (nextArrivalNanos <= now && nextArrivalNanos < endNanos()) {
            long sinceMeasured = (long) nextArrivalNanos - measuredNanos();
            int minute = sinceMeasured < 0 ? WARM_UP : (int) (sinceMeasured / (plan.minuteMillis() * 1_000_000L));
            dispatch(mix.next(index++), minute);
            nextArrivalNanos += gapNanos((long) nextArrivalNanos);
        }
        if (nextArrivalNanos >= endNanos()) {
            arrivalsOver = true;
            checkDrained();
            return;
        }
        long delayMs = Math.max(1, (long) Math.ceil((nextArrivalNanos - (System.nanoTime() - pausedNanos)) / 1e6));
        timer = vertx.setTimer(delayMs, t -> arrive());
    }

    private void dispatch(SoakRequest r, int minute) {
        if (minute != WARM_UP) {
            started.incrementAndGet(minute);
        }
        if (open.get() >= plan.maxInFlight()) {
            SoakResult refused =
                    SoakResult.failed(SoakError.IN_FLIGHT_CAP, plan.maxInFlight() + " requests in flight: not sent");
            mix.ended(r, refused);
            outcomes.add(new SoakOutcome(r.index(), minute, r.kind(), r.cancelAfterChunks() > 0, refused));
            return;
        }
        open.incrementAndGet();
        SoakCall call = transport.send(r);
        long timer = vertx.setTimer(
                plan.timeoutMs(),
                t -> call.abort(SoakResult.failed(SoakError.TIMEOUT, "no end within " + plan.timeoutMs() + " ms")));
        call.future().onComplete(ar -> {
            vertx.cancelTimer(timer);
            SoakResult result = ar.succeeded() ? ar.result() : SoakHttp.transport(ar.cause());
            mix.ended(r, result);
            outcomes.add(new SoakOutcome(r.index(), minute, r.kind(), r.cancelAfterChunks() > 0, result));
            open.decrementAndGet();
            checkDrained();
            checkQuiet();
        });
    }

    private void checkDrained() {
        if (arrivalsOver && open.get() == 0) {
            drained.complete(null);
        }
    }

    /**
     * An exponential gap: arrivals at {@code rate} per second form a Poisson process; in the first half of
     * the warm-up the rate at {@code atNanos} rises linearly from a tenth of it, the second half runs at it.
     */
    private double gapNanos(long atNanos) {
        double rate = plan.rate();
        long ramp = plan.warmupMillis() * 1_000_000L / 2;
        if (atNanos - startNanos < ramp) {
            rate *= Math.max(0.1, (atNanos - startNanos) / (double) ramp);
        }
        return -Math.log(1 - arrivals.nextDouble()) / rate * 1e9;
    }
}
