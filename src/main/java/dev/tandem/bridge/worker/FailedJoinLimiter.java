package dev.tandem.bridge.worker;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.function.LongSupplier;

/**
 * Failed joins per source address. An address's first failure opens a window of {@code windowMs}; once
 * {@code maxFailures} fall in it, the address is locked until the window closes, and then counting starts
 * over. Pure (the caller's clock) and single-threaded: the worker bridge calls it on its event loop.
 *
 * <p>At most {@code maxAddresses} are held, so a flood of source addresses costs bounded memory. Windows
 * are kept in the order they opened, which is also the order they close: expired ones are dropped from
 * the front on every call, and when the table is full the oldest window gives way, being the nearest to
 * closing anyway.
 */
final class FailedJoinLimiter {
    /** What a failure did to its address. */
    enum Outcome {
        /** It opened the address's window. */
        FIRST,
        /** It was counted in an open window. */
        COUNTED,
        /** It reached the limit: the address is locked until its window closes. */
        LOCKED
    }

    private static final class Window {
        final long openedMs;
        int failures;

        Window(long openedMs) {
            this.openedMs = openedMs;
        }
    }

    private final int maxFailures;
    private final long windowMs;
    private final int maxAddresses;
    private final LongSupplier nowMs;
    private final LinkedHashMap<String, Window> windows = new LinkedHashMap<>();

    /** {@code nowMs} must not go backwards (a monotonic clock). */
    FailedJoinLimiter(int maxFailures, long windowMs, int maxAddresses, LongSupplier nowMs) {
        if (maxFailures < 1 || windowMs < 1 || maxAddresses < 1) {
            throw new IllegalArgumentException("limits must be positive");
        }
        this.maxFailures = maxFailures;
        this.windowMs = windowMs;
        this.maxAddresses = maxAddresses;
        this.nowMs = nowMs;
    }

    /** How long joins from {@code address} stay refused unheard; 0 when they are heard. */
    long retryAfterMs(String address) {
        long now = nowMs.getAsLong();
        dropExpired(now);
        Window w = windows.get(address);
        return w == null || w.failures < maxFailures ? 0 : w.openedMs + windowMs - now;
    }

    Outcome recordFailure(String address) {
        long now = nowMs.getAsLong();
        dropExpired(now);
        Window w = windows.get(address);
        if (w == null) {
            if (windows.size() >= maxAddresses) {
                Iterator<Window> oldest = windows.values().iterator();
                oldest.next();
                oldest.remove();
            }
            w = new Window(now);
            windows.put(address, w);
        }
        if (w.failures >= maxFailures) {
            return Outcome.COUNTED; // already locked: the lock's end stays where it was
        }
        w.failures++;
        if (w.failures == maxFailures) {
            return Outcome.LOCKED;
        }
        return w.failures == 1 ? Outcome.FIRST : Outcome.COUNTED;
    }

    /** Addresses held now (open windows). */
    int addresses() {
        dropExpired(nowMs.getAsLong());
        return windows.size();
    }

    private void dropExpired(long now) {
        Iterator<Window> it = windows.values().iterator();
        while (it.hasNext() && it.next().openedMs + windowMs <= now) {
            it.remove();
        }
    }
}
