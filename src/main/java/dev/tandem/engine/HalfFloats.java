package dev.tandem.engine;

/** IEEE 754 half precision and bfloat16 to float, bit-exact (Java 17 has no {@code Float.float16ToFloat}). */
public final class HalfFloats {
    private static final float[] HALF = new float[1 << 16];

    static {
        for (int h = 0; h < HALF.length; h++) {
            HALF[h] = convert((short) h);
        }
    }

    private HalfFloats() {}

    /** The half {@code h} as a float (a table of all 65,536: the conversion is on every weight's path). */
    public static float half(short h) {
        return HALF[h & 0xFFFF];
    }

    /**
     * A float to the nearest half, ties to even (as the F16C instruction and ggml's fallback round);
     * overflow to infinity, NaN kept quiet.
     */
    public static short toHalf(float f) {
        int bits = Float.floatToRawIntBits(f);
        int sign = (bits >>> 16) & 0x8000;
        int exponent = (bits >>> 23) & 0xFF;
        int mantissa = bits & 0x7FFFFF;
        if (exponent == 0xFF) {
            return (short) (sign | 0x7C00 | (mantissa != 0 ? 0x200 | (mantissa >>> 13) : 0));
        }
        int e = exponent - 127 + 15;
        if (e >= 0x1F) {
            return (short) (sign | 0x7C00);
        }
        if (e <= 0) {
            if (e < -10) {
                return (short) sign; // below half the smallest subnormal: zero
            }
            // subnormal: shift the full significand (with its implicit 1) into 10 bits, rounding to even
            int m = mantissa | 0x800000;
            int shift = 14 - e;
            int half = m >>> shift;
            int rest = m & ((1 << shift) - 1);
            int midpoint = 1 << (shift - 1);
            if (rest > midpoint || (rest == midpoint && (half & 1) == 1)) {
                half++;
            }
            return (short) (sign | half);
        }
        int half = (e << 10) | (mantissa >>> 13);
        int rest = mantissa & 0x1FFF;
        if (rest > 0x1000 || (rest == 0x1000 && (half & 1) == 1)) {
            half++; // may carry into the exponent, and up to infinity: both are the right answer
        }
        return (short) (sign | half);
    }

    /** ggml's {@code GGML_FP32_TO_BF16}: round to nearest even, NaN kept quiet. */
    public static short toBfloat16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if ((bits & 0x7FFFFFFF) > 0x7F800000) {
            return (short) ((bits >>> 16) | 64);
        }
        return (short) ((bits + (0x7FFF + ((bits >>> 16) & 1))) >>> 16);
    }

    /** bfloat16 is a float's upper half. */
    public static float bfloat16(short b) {
        return Float.intBitsToFloat((b & 0xFFFF) << 16);
    }

    private static float convert(short h) {
        int bits = h & 0xFFFF;
        int sign = (bits & 0x8000) << 16;
        int exponent = (bits >>> 10) & 0x1F;
        int mantissa = bits & 0x3FF;
        if (exponent == 0x1F) {
            // infinity, or NaN with its payload kept (as ggml's conversion does)
            return Float.intBitsToFloat(sign | 0x7F800000 | (mantissa << 13));
        }
        if (exponent == 0) {
            if (mantissa == 0) {
                return Float.intBitsToFloat(sign);
            }
            // subnormal: mantissa × 2^-24, exact in a float
            float v = mantissa * 0x1p-24f;
            return sign == 0 ? v : -v;
        }
        return Float.intBitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
    }
}
