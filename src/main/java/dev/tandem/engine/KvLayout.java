package dev.tandem.engine;

/** Shape of a KV cache: per layer, K and V rows of {@code kvHeads * headDim} floats, grouped in blocks of tokens. */
public record KvLayout(int layers, int kvHeads, int headDim, int blockSize) {

    public KvLayout {
        if (layers <= 0 || kvHeads <= 0 || headDim <= 0 || blockSize <= 0) {
            throw new IllegalArgumentException("KV layout dimensions must be positive: " + this);
        }
    }

    public static KvLayout of(ModelConfig config, int blockSize) {
        return new KvLayout(config.layers(), config.kvHeads(), config.headSize(), blockSize);
    }

    public int kvDim() {
        return kvHeads * headDim;
    }

    /** Floats in one block: layers × {K, V} × blockSize × kvDim. */
    public int blockFloats() {
        return layers * 2 * blockSize * kvDim();
    }

    public long blockBytes() {
        return (long) blockFloats() * Float.BYTES;
    }

    public int blocksFor(int tokens) {
        return (tokens + blockSize - 1) / blockSize;
    }
}
