package dev.tandem.cluster;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.function.BooleanSupplier;

/**
 * How a verticle drains before a shutdown: on its own context it stops taking work, then the drain
 * waits until the verticle is idle or the time is up — completing either way, since what is still
 * running moves elsewhere once the node leaves. Callable from any thread.
 */
public final class ShutdownDrain {
    private static final long POLL_MS = 50;

    private ShutdownDrain() {}

    /**
     * @param stopTaking runs first, on {@code context}: refuse or stop attracting new work
     * @param idle       read on {@code context} every {@value #POLL_MS} ms
     */
    public static Future<Void> run(Context context, Runnable stopTaking, BooleanSupplier idle, long timeoutMs) {
        Promise<Void> done = Promise.promise();
        long deadline = System.nanoTime() + timeoutMs * 1_000_000;
        context.runOnContext(v -> {
            stopTaking.run();
            context.owner().setPeriodic(1, POLL_MS, t -> {
                if (idle.getAsBoolean() || System.nanoTime() > deadline) {
                    context.owner().cancelTimer(t);
                    done.tryComplete();
                }
            });
        });
        return done.future();
    }
}
