package dev.tandem.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The primitive set behaves as a {@code HashSet<Long>} through growth, removal runs and shrinking. */
class LongHashSetTest {

    /** {@code range}: values drawn from [-range/2, range/2), small ranges make long probe runs and 0 frequent. */
    @ParameterizedTest
    @ValueSource(ints = {4, 64, 5_000, 1 << 30})
    void agreesWithHashSet(int range) {
        Random random = new Random(range);
        LongHashSet set = new LongHashSet();
        Set<Long> expected = new HashSet<>();
        for (int step = 0; step < 200_000; step++) {
            long v = random.nextInt(range) - range / 2;
            // Phases: mostly adding, then mostly removing (shrinks), then mixed.
            int phase = step / 50_000;
            boolean add = phase == 1 ? random.nextInt(4) == 0 : random.nextInt(4) != 0;
            if (add) {
                assertEquals(expected.add(v), set.add(v), "add " + v);
            } else {
                assertEquals(expected.remove(v), set.remove(v), "remove " + v);
            }
            long probe = random.nextInt(range) - range / 2;
            assertEquals(expected.contains(probe), set.contains(probe), "contains " + probe);
            assertEquals(expected.size(), set.size());
        }
        long[] all = set.toArray();
        java.util.Arrays.sort(all);
        assertArrayEquals(expected.stream().mapToLong(Long::longValue).sorted().toArray(), all);
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE})
    void edgeValues(long v) {
        LongHashSet set = new LongHashSet(1);
        assertEquals(false, set.contains(v));
        assertEquals(true, set.add(v));
        assertEquals(false, set.add(v));
        assertEquals(true, set.contains(v));
        assertEquals(1, set.size());
        assertArrayEquals(new long[] {v}, set.toArray());
        assertEquals(true, set.remove(v));
        assertEquals(false, set.remove(v));
        assertEquals(0, set.size());
    }
}
