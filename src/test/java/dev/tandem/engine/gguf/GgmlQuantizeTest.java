package dev.tandem.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.HalfFloats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The reference quantizers: halves to nearest even, C's roundf, and blocks that read back within their step. */
class GgmlQuantizeTest {

    @Test
    void everyHalfSurvivesARoundTrip() {
        for (int h = 0; h < 1 << 16; h++) {
            float f = HalfFloats.half((short) h);
            if (!Float.isNaN(f)) {
                assertEquals((short) h, HalfFloats.toHalf(f), "half " + Integer.toHexString(h));
            }
        }
        assertTrue(Float.isNaN(HalfFloats.half(HalfFloats.toHalf(Float.NaN))));
    }

    @Test
    void aFloatGoesToTheNearestHalfTiesToEven() {
        Random random = new Random(7);
        for (int i = 0; i < 200_000; i++) {
            float f = Float.intBitsToFloat(random.nextInt());
            if (Float.isNaN(f) || Math.abs(f) > 65504) {
                continue;
            }
            short h = HalfFloats.toHalf(f);
            double got = HalfFloats.half(h);
            for (int step = -1; step <= 1; step += 2) {
                double neighbour = HalfFloats.half((short) (h + step));
                if (Double.isNaN(neighbour)
                        || Double.isInfinite(neighbour)
                        || Math.signum(neighbour) * Math.signum(got) < 0) {
                    continue;
                }
                double gap = Math.abs(neighbour - f) - Math.abs(got - f);
                assertTrue(
                        gap > 0 || (gap == 0 && (h & 1) == 0), f + " -> " + got + ", but " + neighbour + " is nearer");
            }
        }
        assertEquals(
                HalfFloats.half((short) 0x7C00), HalfFloats.half(HalfFloats.toHalf(65520f)), "overflow to infinity");
        assertEquals(65504f, HalfFloats.half(HalfFloats.toHalf(65519f)));
        assertEquals(0x0001, HalfFloats.toHalf(0x1.8p-25f), "above half the least subnormal");
        assertEquals(0x0000, HalfFloats.toHalf(0x1p-25f), "a tie goes to even: zero");
        assertEquals((short) 0x8000, HalfFloats.toHalf(-1e-30f), "negative zero keeps its sign");
    }

    @Test
    void roundfTakesHalvesAwayFromZero() {
        assertEquals(1f, GgmlQuantize.roundf(0.5f));
        assertEquals(-1f, GgmlQuantize.roundf(-0.5f));
        assertEquals(3f, GgmlQuantize.roundf(2.5f));
        assertEquals(-3f, GgmlQuantize.roundf(-2.5f));
        assertEquals(1f, GgmlQuantize.roundf(1.4999999f));
        assertEquals(-0f, GgmlQuantize.roundf(-0.2f));
    }

    @Test
    void bfloat16RoundsToNearestEven() {
        assertEquals((short) 0x3F80, HalfFloats.toBfloat16(1.0f));
        assertEquals((short) 0x3F80, HalfFloats.toBfloat16(Float.intBitsToFloat(0x3F808000)));
        assertEquals((short) 0x3F82, HalfFloats.toBfloat16(Float.intBitsToFloat(0x3F818000)));
        assertEquals((short) 0x3F81, HalfFloats.toBfloat16(Float.intBitsToFloat(0x3F808001)));
        assertTrue(Float.isNaN(HalfFloats.bfloat16(HalfFloats.toBfloat16(Float.NaN))));
    }

    @Test
    void q8_0AndQ4_0BlocksReadBackWithinTheirStep() {
        Random random = new Random(11);
        float[] x = new float[32 * 64];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) (random.nextGaussian() * (1 + i / 32));
        }
        for (GgmlType type : new GgmlType[] {GgmlType.Q8_0, GgmlType.Q4_0}) {
            byte[] bytes = GgmlQuantize.quantize(type, x);
            assertEquals(type.bytes(x.length), bytes.length);
            float[] y = new float[x.length];
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            GgmlDequant.row(type, b, 0, x.length, y, 0);
            for (int block = 0; block < x.length / 32; block++) {
                float d = Math.abs(HalfFloats.half(b.getShort(block * type.blockBytes())));
                for (int j = block * 32; j < block * 32 + 32; j++) {
                    // Half a step, plus the stored scale's own rounding (a half keeps 11 bits) times up to 127
                    // steps; Q4_0 makes the largest magnitude -8 steps and clamps the other side at +7: a step.
                    float bound = type == GgmlType.Q8_0 ? 0.57f * d : 1.01f * d;
                    assertTrue(Math.abs(x[j] - y[j]) <= bound, type + " element " + j + ": " + x[j] + " -> " + y[j]);
                }
            }
        }
    }

    @Test
    void floatTypesKeepTheirValues() {
        float[] x = {1f, -2.5f, 0.333251953125f, 65504f};
        for (GgmlType type : new GgmlType[] {GgmlType.F32, GgmlType.F16, GgmlType.BF16}) {
            float[] y = new float[x.length];
            GgmlDequant.row(
                    type, ByteBuffer.wrap(GgmlQuantize.quantize(type, x)).order(ByteOrder.LITTLE_ENDIAN), 0, 4, y, 0);
            assertEquals(1f, y[0], type.name());
            assertEquals(-2.5f, y[1], type.name());
        }
    }
}
