package dev.tandem.bench.trace;

/**
 * A set of longs in one open-addressed array. The ideal cache of the conversation trace holds millions of
 * block hashes at Tandem's block size; as boxed {@code Long}s in a {@code HashSet} that is several hundred MB.
 */
final class LongSet {
    private static final long EMPTY = 0; // a stored 0 is tracked apart, so 0 can mark free slots

    private long[] slots = new long[1 << 10];
    private int size;
    private boolean hasZero;

    boolean contains(long value) {
        if (value == EMPTY) {
            return hasZero;
        }
        int mask = slots.length - 1;
        for (int i = slot(value, mask); ; i = (i + 1) & mask) {
            long s = slots[i];
            if (s == value) {
                return true;
            }
            if (s == EMPTY) {
                return false;
            }
        }
    }

    void add(long value) {
        if (value == EMPTY) {
            hasZero = true;
            return;
        }
        if (insert(slots, value)) {
            size++;
            if (size * 4L > slots.length * 3L) {
                grow();
            }
        }
    }

    int size() {
        return size + (hasZero ? 1 : 0);
    }

    private void grow() {
        long[] bigger = new long[slots.length * 2];
        for (long s : slots) {
            if (s != EMPTY) {
                insert(bigger, s);
            }
        }
        slots = bigger;
    }

    /** Whether {@code value} was new to {@code table}. */
    private static boolean insert(long[] table, long value) {
        int mask = table.length - 1;
        for (int i = slot(value, mask); ; i = (i + 1) & mask) {
            long s = table[i];
            if (s == value) {
                return false;
            }
            if (s == EMPTY) {
                table[i] = value;
                return true;
            }
        }
    }

    // The values are already well-mixed hashes, but folding the high half in costs nothing and keeps
    // linear probing sane for callers that store plain counters.
    private static int slot(long value, int mask) {
        return (int) (value ^ (value >>> 32)) & mask;
    }
}
