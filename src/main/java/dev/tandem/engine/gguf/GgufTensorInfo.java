package dev.tandem.engine.gguf;

import java.util.Arrays;

/**
 * A tensor's entry in a GGUF file: its name, its dimensions (ggml order: {@code dims[0]} is the
 * contiguous one, a matrix's row length), its element type and its offset in the data section.
 */
public record GgufTensorInfo(String name, long[] dims, GgmlType type, long offset) {
    public GgufTensorInfo {
        dims = dims.clone();
    }

    @Override
    public long[] dims() {
        return dims.clone();
    }

    public long elements() {
        long n = 1;
        for (long d : dims) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    /** The bytes the tensor takes in the file. */
    public long byteSize() {
        return type.bytes(elements());
    }

    @Override
    public String toString() {
        return name + Arrays.toString(dims) + " " + type + " @" + offset;
    }
}
