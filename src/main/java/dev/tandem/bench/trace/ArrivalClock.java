package dev.tandem.bench.trace;

/**
 * Turns a trace's raw timestamps into milliseconds after its first request, refusing a timestamp
 * earlier than the one before: replay sends requests in file order, so the order must be the arrival order.
 */
final class ArrivalClock {
    private final long unitsPerMs;
    private long first = Long.MIN_VALUE;
    private long previous;
    private String previousText;

    /** @param unitsPerMs raw timestamp units in one millisecond (1 for ms, 1,000,000 for ns) */
    ArrivalClock(long unitsPerMs) {
        this.unitsPerMs = unitsPerMs;
    }

    /** Milliseconds from the first timestamp to {@code raw}, rounded down. */
    long arrivalMs(long raw, String rawText) {
        if (first == Long.MIN_VALUE) {
            first = raw;
        } else if (raw < previous) {
            throw new BadTraceLine(
                    "timestamp " + rawText + " is earlier than the previous request's (" + previousText + ")");
        }
        previous = raw;
        previousText = rawText;
        return (raw - first) / unitsPerMs;
    }
}
