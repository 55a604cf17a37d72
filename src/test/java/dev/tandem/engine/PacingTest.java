package dev.tandem.engine;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A paced wait ends at its deadline, never before, and gives way to a cancel or an interrupt. */
class PacingTest {

    @Test
    void returnsNoEarlierThanTheDeadline() {
        for (long nanos : new long[] {0, 1, 250_000, 1_300_000, 12_345_678}) {
            long deadline = System.nanoTime() + nanos;
            Pacing.waitUntil(deadline, () -> false);
            assertTrue(System.nanoTime() - deadline >= 0, "returned before a deadline " + nanos + " ns away");
        }
    }

    @Test
    void aCancelEndsTheWaitBetweenSlices() {
        AtomicInteger looks = new AtomicInteger();
        long deadline = System.nanoTime() + 60_000_000_000L;
        assertThrows(CancellationException.class, () -> Pacing.waitUntil(deadline, () -> looks.incrementAndGet() > 2));
        assertTrue(System.nanoTime() < deadline, "the cancel was seen long before the deadline");
    }

    @Test
    void anInterruptEndsTheWaitAndStaysSet() {
        Thread.currentThread().interrupt();
        try {
            assertThrows(
                    CancellationException.class,
                    () -> Pacing.waitUntil(System.nanoTime() + 60_000_000_000L, () -> false));
            assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept for the caller");
        } finally {
            Thread.interrupted();
        }
    }
}
