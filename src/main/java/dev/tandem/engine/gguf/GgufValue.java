package dev.tandem.engine.gguf;

import java.util.Objects;

/**
 * One metadata value with its GGUF type. Scalars are boxed ({@link Long} for every integer type,
 * {@link Float}, {@link Double}, {@link Boolean}, {@link String}); an array is a primitive array of
 * its element type ({@code long[]} for integers, {@code float[]}, {@code double[]}, {@code boolean[]},
 * {@code String[]}), or {@code GgufValue[]} for an array of arrays.
 */
public record GgufValue(GgufValueType type, GgufValueType elementType, Object value) {
    public GgufValue {
        Objects.requireNonNull(type);
        Objects.requireNonNull(value);
        if ((type == GgufValueType.ARRAY) != (elementType != null)) {
            throw new IllegalArgumentException("an element type is given for arrays, and only for them");
        }
    }

    public static GgufValue of(GgufValueType type, Object value) {
        return new GgufValue(type, null, value);
    }

    public static GgufValue string(String s) {
        return of(GgufValueType.STRING, s);
    }

    public static GgufValue uint32(long v) {
        return of(GgufValueType.UINT32, v);
    }

    public static GgufValue float32(float v) {
        return of(GgufValueType.FLOAT32, v);
    }

    public static GgufValue bool(boolean v) {
        return of(GgufValueType.BOOL, v);
    }

    public static GgufValue array(GgufValueType elementType, Object values) {
        return new GgufValue(GgufValueType.ARRAY, elementType, values);
    }

    /** The number of elements of an array value. */
    public int length() {
        return java.lang.reflect.Array.getLength(value);
    }
}
