package dev.tandem.engine;

/**
 * The precision a model's K and V values have, and so the width they travel in (the TKV stream's dtype):
 * an engine whose cache holds f16-rounded values (a GGUF model, as llama.cpp's f16 cache) sends them in
 * two bytes each without losing a bit. In memory every value is a float.
 */
public enum KvPrecision {
    F32(0, 4),
    F16(1, 2),
    BF16(2, 2);

    private final int dtype;
    private final int bytes;

    KvPrecision(int dtype, int bytes) {
        this.dtype = dtype;
        this.bytes = bytes;
    }

    /** The TKV header's dtype code. */
    public int dtype() {
        return dtype;
    }

    /** Bytes per value on the wire. */
    public int bytes() {
        return bytes;
    }

    /** The precision of a TKV dtype code, or null for an unknown one. */
    public static KvPrecision ofDtype(int dtype) {
        for (KvPrecision p : values()) {
            if (p.dtype == dtype) {
                return p;
            }
        }
        return null;
    }

    /** The value's wire bits (little-endian, the low {@link #bytes()} bytes of the int). */
    public int encode(float v) {
        return switch (this) {
            case F32 -> Float.floatToRawIntBits(v);
            case F16 -> HalfFloats.toHalf(v) & 0xFFFF;
            case BF16 -> HalfFloats.toBfloat16(v) & 0xFFFF;
        };
    }

    /** {@code count} values from {@code src} (little-endian, at its position) into dst[at, at + count). */
    public void decode(java.nio.ByteBuffer src, float[] dst, int at, int count) {
        if (this == F32) {
            src.asFloatBuffer().get(dst, at, count);
            return;
        }
        for (int i = 0; i < count; i++) {
            dst[at + i] = decode(src.getShort(src.position() + 2 * i) & 0xFFFF);
        }
    }

    public float decode(int bits) {
        return switch (this) {
            case F32 -> Float.intBitsToFloat(bits);
            case F16 -> HalfFloats.half((short) bits);
            case BF16 -> HalfFloats.bfloat16((short) bits);
        };
    }
}
