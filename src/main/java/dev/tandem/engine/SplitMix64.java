package dev.tandem.engine;

/**
 * SplitMix64 (Steele, Lea, Flood 2014): a tiny, fully specified 64-bit generator. Used wherever a
 * random stream must be identical in every JVM, forever (sampling coins, built-in weights), which
 * {@link java.util.Random} and friends do not promise.
 */
public final class SplitMix64 {
    /** The golden-ratio increment of the SplitMix64 state. */
    public static final long GAMMA = 0x9E3779B97F4A7C15L;

    private long state;

    public SplitMix64(long seed) {
        this.state = seed;
    }

    /** The next 64 random bits. */
    public long nextLong() {
        state += GAMMA;
        return mix(state);
    }

    /** Uniform in [0, 1) with 24 random bits: exactly representable as a float. */
    public float nextFloat() {
        return (nextLong() >>> 40) * 0x1.0p-24f;
    }

    /** The finalizer of SplitMix64: a bijective 64-bit mix with good avalanche. */
    public static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * The {@code index}-th output (0-based) of the generator seeded with {@code seed}, without
     * stepping through the earlier ones: mix(seed + (index + 1) · γ).
     */
    public static long at(long seed, long index) {
        return mix(seed + (index + 1) * GAMMA);
    }

    /** Uniform double in [0, 1) from the top 53 bits of {@code bits}. */
    public static double unitDouble(long bits) {
        return (bits >>> 11) * 0x1.0p-53;
    }
}
