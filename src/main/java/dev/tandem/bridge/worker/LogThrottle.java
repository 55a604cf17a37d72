package dev.tandem.bridge.worker;

import java.util.function.LongSupplier;

/**
 * At most {@code lines} log lines per {@code intervalMs}, so that a flood of events (failed joins from
 * many addresses) costs a few lines, not a line each; the lines held back are counted and the next line
 * let through says how many. Pure (the caller's clock) and single-threaded.
 */
final class LogThrottle {
    private final int lines;
    private final long intervalMs;
    private final LongSupplier nowMs;
    private long intervalStartMs;
    private boolean started;
    private int used;
    private long heldBack;

    LogThrottle(int lines, long intervalMs, LongSupplier nowMs) {
        this.lines = lines;
        this.intervalMs = intervalMs;
        this.nowMs = nowMs;
    }

    /** -1: hold this line back; else log it, with the number of lines held back since the last one. */
    long admit() {
        long now = nowMs.getAsLong();
        if (!started || now - intervalStartMs >= intervalMs) {
            started = true;
            intervalStartMs = now;
            used = 0;
        }
        if (used >= lines) {
            heldBack++;
            return -1;
        }
        used++;
        long held = heldBack;
        heldBack = 0;
        return held;
    }
}
