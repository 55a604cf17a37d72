package dev.tandem.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StrictExpTest {

    @ParameterizedTest
    @ValueSource(
            doubles = {
                0.0,
                -0.0,
                1.0,
                -1.0,
                0.34657359,
                0.34657360,
                1.0397,
                1.0398,
                -1.0398,
                1e-9,
                -1e-9,
                3e-9,
                709.78,
                709.79,
                -708.5,
                -720.0,
                -745.1,
                -745.2,
                Double.MIN_VALUE,
                Double.MAX_VALUE,
                -Double.MAX_VALUE,
                Double.NaN,
                Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY
            })
    void edgeCasesMatchStrictMath(double x) {
        assertEquals(
                Double.doubleToRawLongBits(StrictMath.exp(x)), Double.doubleToRawLongBits(StrictExp.exp(x)), "x=" + x);
    }

    @Test
    void randomArgumentsMatchStrictMathBitForBit() {
        SplitMix64 rng = new SplitMix64(7);
        for (int i = 0; i < 400_000; i++) {
            double x = switch (i % 3) {
                case 0 -> Double.longBitsToDouble(rng.nextLong());
                case 1 -> Float.intBitsToFloat((int) rng.nextLong());
                default -> rng.nextFloat() * 200.0 - 110.0; // where softmax and SiLU arguments live
            };
            double expected = StrictMath.exp(x);
            double actual = StrictExp.exp(x);
            if (Double.doubleToRawLongBits(expected) != Double.doubleToRawLongBits(actual)) {
                assertEquals(expected, actual, "x=" + x);
            }
        }
    }
}
