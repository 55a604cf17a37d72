package dev.tandem.engine;

/**
 * Shape of a KV cache: per layer, K and V rows of {@code kvHeads * headDim} floats, grouped in blocks of
 * tokens.
 *
 * @param blockBytes what one block occupies in the accelerator's memory: what caches, capacities and
 *                   "KV bytes moved" are counted in. The float32 size of the block for engines that hold
 *                   real K/V; a simulated engine holds a token of stand-in floats per position but counts
 *                   the bytes of the model it simulates (e.g. 128 KiB per token for an 8B model in bf16).
 * @param precision what the values are exact in, and so travel in: F32, or F16 for an engine whose cache
 *                  holds f16-rounded values (a GGUF model's)
 */
public record KvLayout(int layers, int kvHeads, int headDim, int blockSize, long blockBytes, KvPrecision precision) {

    public KvLayout {
        java.util.Objects.requireNonNull(precision, "precision");
        if (layers <= 0 || kvHeads <= 0 || headDim <= 0 || blockSize <= 0 || blockBytes <= 0) {
            throw new IllegalArgumentException("KV layout dimensions must be positive: " + layers + "×" + kvHeads + "×"
                    + headDim + ", block " + blockSize + " tokens of " + blockBytes + " bytes");
        }
    }

    public KvLayout(int layers, int kvHeads, int headDim, int blockSize, long blockBytes) {
        this(layers, kvHeads, headDim, blockSize, blockBytes, KvPrecision.F32);
    }

    /** A layout whose blocks count what their float32 values take. */
    public KvLayout(int layers, int kvHeads, int headDim, int blockSize) {
        this(layers, kvHeads, headDim, blockSize, (long) layers * 2 * blockSize * kvHeads * headDim * Float.BYTES);
    }

    public static KvLayout of(ModelConfig config, int blockSize) {
        return of(config, blockSize, KvPrecision.F32);
    }

    /** Blocks count the floats the heap holds; the values travel in {@code precision}. */
    public static KvLayout of(ModelConfig config, int blockSize, KvPrecision precision) {
        KvLayout f32 = new KvLayout(config.layers(), config.kvHeads(), config.headSize(), blockSize);
        return new KvLayout(f32.layers, f32.kvHeads, f32.headDim, blockSize, f32.blockBytes, precision);
    }

    public int kvDim() {
        return kvHeads * headDim;
    }

    /** Floats in one block: layers × {K, V} × blockSize × kvDim. */
    public int blockFloats() {
        return layers * 2 * blockSize * kvDim();
    }

    /** Bytes one block takes on the wire (its values in {@link #precision()}), whatever {@link #blockBytes()} counts. */
    public long wireBlockBytes() {
        return (long) blockFloats() * precision.bytes();
    }

    public int blocksFor(int tokens) {
        return (tokens + blockSize - 1) / blockSize;
    }
}
