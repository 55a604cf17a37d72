package dev.tandem.engine.gguf;

/** The type tag of a GGUF metadata value, as the file numbers it. */
public enum GgufValueType {
    UINT8(1),
    INT8(1),
    UINT16(2),
    INT16(2),
    UINT32(4),
    INT32(4),
    FLOAT32(4),
    BOOL(1),
    STRING(-1),
    ARRAY(-1),
    UINT64(8),
    INT64(8),
    FLOAT64(8);

    /** Bytes of one value, or -1 when its length is written with it. */
    final int size;

    GgufValueType(int size) {
        this.size = size;
    }

    public int id() {
        return ordinal();
    }

    /** The type numbered {@code id}, or null for none. */
    public static GgufValueType byId(int id) {
        GgufValueType[] all = values();
        return id >= 0 && id < all.length ? all[id] : null;
    }
}
