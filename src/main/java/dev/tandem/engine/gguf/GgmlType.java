package dev.tandem.engine.gguf;

/**
 * A tensor's element type as ggml numbers it in a GGUF file: how many elements a block holds and how
 * many bytes it takes. Block-quantized types store a block's scale(s) beside its packed values.
 */
public enum GgmlType {
    F32(0, 1, 4),
    F16(1, 1, 2),
    Q4_0(2, 32, 18),
    Q4_1(3, 32, 20),
    Q5_0(6, 32, 22),
    Q5_1(7, 32, 24),
    Q8_0(8, 32, 34),
    Q8_1(9, 32, 36),
    Q2_K(10, 256, 84),
    Q3_K(11, 256, 110),
    Q4_K(12, 256, 144),
    Q5_K(13, 256, 176),
    Q6_K(14, 256, 210),
    Q8_K(15, 256, 292),
    I8(24, 1, 1),
    I16(25, 1, 2),
    I32(26, 1, 4),
    I64(27, 1, 8),
    F64(28, 1, 8),
    BF16(30, 1, 2);

    private final int id;
    private final int blockElements;
    private final int blockBytes;

    GgmlType(int id, int blockElements, int blockBytes) {
        this.id = id;
        this.blockElements = blockElements;
        this.blockBytes = blockBytes;
    }

    public int id() {
        return id;
    }

    public int blockElements() {
        return blockElements;
    }

    public int blockBytes() {
        return blockBytes;
    }

    /** The bytes of {@code elements} elements; the count must fill whole blocks. */
    public long bytes(long elements) {
        if (elements % blockElements != 0) {
            throw new IllegalArgumentException(
                    name() + " stores blocks of " + blockElements + " elements; " + elements + " is not a multiple");
        }
        return elements / blockElements * blockBytes;
    }

    /** The type numbered {@code id}, or null for one this reader does not know. */
    public static GgmlType byId(int id) {
        for (GgmlType t : values()) {
            if (t.id == id) {
                return t;
            }
        }
        return null;
    }
}
