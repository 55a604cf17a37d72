package dev.tandem.engine;

import java.util.concurrent.CancellationException;
import java.util.concurrent.locks.LockSupport;
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
            // parkNanos, not Thread.sleep(ms, ns): before JDK 21 sleep rounds any nanoseconds up to a whole
            // millisecond, so every paced decode step ran up to 1 ms long (ITL 21.9 ms at a 20 ms pace).
            LockSupport.parkNanos(Math.min(left, SLICE_NANOS));
            if (Thread.currentThread().isInterrupted()) {
                throw new CancellationException("interrupted");
            }
        }
    }
}
