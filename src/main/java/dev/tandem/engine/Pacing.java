package dev.tandem.engine;

import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;

/**
 * Waits the way an accelerator's compute takes time: in short slices, so that a cancel is honoured
 * about as promptly as real compute would honour it. For engines that emulate or simulate a device
 * ({@link PacedEngine}, the sim engine); blocking, on the worker's compute thread.
 */
public final class Pacing {
    /** The longest sleep between two looks at the cancel flag. */
    static final long SLICE_NANOS = 5_000_000;

    private Pacing() {}

    /**
     * Returns once {@link System#nanoTime()} has reached {@code deadlineNanos}.
     *
     * @throws CancellationException when {@code cancelled} turns true before the deadline, or the thread is interrupted
     */
    public static void waitUntil(long deadlineNanos, BooleanSupplier cancelled) {
        while (true) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return;
            }
            if (cancelled.getAsBoolean()) {
                throw new CancellationException("cancelled");
            }
            long slice = Math.min(left, SLICE_NANOS);
            try {
                Thread.sleep(slice / 1_000_000, (int) (slice % 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CancellationException("interrupted");
            }
        }
    }
}
