package dev.tandem.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Every one of the 65,536 halves against the definition computed in doubles; bfloat16 against its meaning. */
class HalfFloatsTest {

    @Test
    void everyHalfIsItsDefinedValue() {
        for (int h = 0; h < 1 << 16; h++) {
            float got = HalfFloats.half((short) h);
            double sign = (h >>> 15) == 1 ? -1.0 : 1.0;
            int e = (h >>> 10) & 0x1F;
            int m = h & 0x3FF;
            if (e == 0x1F) {
                assertTrue(m == 0 ? Float.isInfinite(got) && Math.signum(got) == sign : Float.isNaN(got), "half " + h);
                continue;
            }
            double expected = e == 0 ? sign * m * Math.pow(2, -24) : sign * (1 + m / 1024.0) * Math.pow(2, e - 15);
            assertEquals((float) expected, got, "half " + Integer.toHexString(h));
        }
    }

    @Test
    void knownHalves() {
        assertEquals(1.0f, HalfFloats.half((short) 0x3C00));
        assertEquals(-2.0f, HalfFloats.half((short) 0xC000));
        assertEquals(65504f, HalfFloats.half((short) 0x7BFF));
        assertEquals(0x1p-24f, HalfFloats.half((short) 0x0001));
        assertEquals(0.333251953125f, HalfFloats.half((short) 0x3555));
    }

    @Test
    void bfloat16IsTheUpperHalfOfAFloat() {
        assertEquals(1.0f, HalfFloats.bfloat16((short) 0x3F80));
        assertEquals(-3.140625f, HalfFloats.bfloat16((short) 0xC049));
        assertTrue(Float.isNaN(HalfFloats.bfloat16((short) 0x7FC0)));
    }
}
