package dev.tandem.engine.gguf;

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
