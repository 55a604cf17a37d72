package dev.tandem.cluster;

import java.util.Arrays;

/**
 * A set of {@code long}s without boxing: open addressing, linear probing, backward-shift deletion. A
 * worker's KV caches may hold hundreds of thousands of blocks; a {@code HashSet<Long>} would spend about
 * 50 bytes on each and allocate on every lookup, this spends 8 to 24. Not thread-safe.
 */
final class LongHashSet {
    /** Marks a free slot; the value 0 itself lives in {@link #hasZero}. */
    private static final long FREE = 0;

    private static final int MIN_CAPACITY = 16;

    private long[] slots;
    private int shift;
    private int used;
    private boolean hasZero;

    LongHashSet() {
        this(0);
    }

    /** A set that holds {@code expected} values without growing. */
    LongHashSet(int expected) {
        allocate(capacityFor(expected));
    }

    int size() {
        return used + (hasZero ? 1 : 0);
    }

    boolean contains(long value) {
        if (value == FREE) {
            return hasZero;
        }
        int mask = slots.length - 1;
        for (int i = home(value); ; i = (i + 1) & mask) {
            long s = slots[i];
            if (s == value) {
                return true;
            }
            if (s == FREE) {
                return false;
            }
        }
    }

    /** True when the value was not in the set. */
    boolean add(long value) {
        if (value == FREE) {
            boolean added = !hasZero;
            hasZero = true;
            return added;
        }
        int mask = slots.length - 1;
        int i = home(value);
        for (; slots[i] != FREE; i = (i + 1) & mask) {
            if (slots[i] == value) {
                return false;
            }
        }
        slots[i] = value;
        if (++used > slots.length * 2 / 3) {
            rehash(slots.length * 2);
        }
        return true;
    }

    /** True when the value was in the set. */
    boolean remove(long value) {
        if (value == FREE) {
            boolean removed = hasZero;
            hasZero = false;
            return removed;
        }
        int mask = slots.length - 1;
        int hole = home(value);
        for (; slots[hole] != value; hole = (hole + 1) & mask) {
            if (slots[hole] == FREE) {
                return false;
            }
        }
        // Close the hole: pull back every later entry of the run whose home is not after the hole.
        for (int j = (hole + 1) & mask; slots[j] != FREE; j = (j + 1) & mask) {
            if (((j - home(slots[j])) & mask) >= ((j - hole) & mask)) {
                slots[hole] = slots[j];
                hole = j;
            }
        }
        slots[hole] = FREE;
        used--;
        if (slots.length > MIN_CAPACITY && used < slots.length / 8) {
            rehash(capacityFor(used));
        }
        return true;
    }

    /** Every value, in no particular order. */
    long[] toArray() {
        long[] out = new long[size()];
        int n = 0;
        if (hasZero) {
            out[n++] = FREE;
        }
        for (long s : slots) {
            if (s != FREE) {
                out[n++] = s;
            }
        }
        return out;
    }

    /** Fibonacci hashing: the top bits of the product, so sequential values spread as well as random ones. */
    private int home(long value) {
        return (int) ((value * 0x9E3779B97F4A7C15L) >>> shift);
    }

    private static int capacityFor(int expected) {
        long needed = Math.max(MIN_CAPACITY, (long) expected * 3 / 2 + 1);
        if (needed > 1 << 30) {
            throw new IllegalStateException("too many values: " + expected);
        }
        return Integer.highestOneBit((int) needed - 1) << 1;
    }

    private void allocate(int capacity) {
        slots = new long[capacity];
        shift = Long.numberOfLeadingZeros(capacity - 1L);
        used = 0;
    }

    private void rehash(int capacity) {
        long[] old = slots;
        allocate(capacity);
        int mask = capacity - 1;
        for (long v : old) {
            if (v != FREE) {
                int i = home(v);
                while (slots[i] != FREE) {
                    i = (i + 1) & mask;
                }
                slots[i] = v;
                used++;
            }
        }
    }

    @Override
    public String toString() {
        long[] values = toArray();
        Arrays.sort(values);
        return Arrays.toString(values);
    }
}
