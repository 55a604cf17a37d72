package dev.tandem.bench.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.SplitMix64;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The ideal cache's block set agrees with a {@link HashSet} through many growths, 0 and negatives included. */
class LongSetTest {
    @Test
    void agreesWithAHashSet() {
        LongSet set = new LongSet();
        Set<Long> expected = new HashSet<>();
        SplitMix64 random = new SplitMix64(1);

        for (int i = 0; i < 20_000; i++) {
            // Half random hashes, half small counters (which collide in the low bits), plus 0 and -1.
            long v = i % 2 == 0 ? random.nextLong() : (i % 1001) - 1;
            assertEquals(expected.contains(v), set.contains(v), "before adding " + v);
            set.add(v);
            expected.add(v);
            assertTrue(set.contains(v));
        }

        assertEquals(expected.size(), set.size());
        assertTrue(set.contains(0));
        assertTrue(set.contains(-1));
        assertFalse(set.contains(Long.MIN_VALUE));
    }
}
