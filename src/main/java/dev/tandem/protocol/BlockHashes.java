package dev.tandem.protocol;

/**
 * Block identity for KV reuse: a full block of {@code blockSize} tokens is named by a 64-bit hash
 * chained over (model fingerprint, the previous block's hash, its token ids), so equal hashes mean —
 * barring a 64-bit collision, which workers rule out by keeping the tokens — the same tokens at the same
 * positions after the same prefix, hence the same K/V. Only full blocks are named; a prompt's tail is
 * private to its sequence. Routers hash prompts to score cached prefixes; workers hash what they
 * cache; both with this one function.
 */
public final class BlockHashes {
    /** The "previous block" of a sequence's first block. */
    public static final long ROOT = 0;

    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private BlockHashes() {}

    /** The hashes of every full block of {@code tokens}, in order. */
    public static long[] of(long fingerprint, int blockSize, int[] tokens) {
        return of(fingerprint, blockSize, tokens, tokens.length / blockSize);
    }

    /** The hashes of the first {@code blocks} full blocks of {@code tokens}. */
    public static long[] of(long fingerprint, int blockSize, int[] tokens, int blocks) {
        if (blockSize <= 0 || blocks < 0 || (long) blocks * blockSize > tokens.length) {
            throw new IllegalArgumentException(
                    blocks + " blocks of " + blockSize + " tokens do not fit " + tokens.length + " tokens");
        }
        long[] out = new long[blocks];
        long previous = ROOT;
        for (int b = 0; b < blocks; b++) {
            previous = chain(fingerprint, previous, tokens, b * blockSize, (b + 1) * blockSize);
            out[b] = previous;
        }
        return out;
    }

    /** The hash of the block holding {@code tokens[from, to)} after the block named {@code previous}. */
    public static long chain(long fingerprint, long previous, int[] tokens, int from, int to) {
        long h = mix(fingerprint ^ mix(previous + GOLDEN));
        for (int i = from; i < to; i++) {
            h = mix(h + GOLDEN + (tokens[i] & 0xFFFFFFFFL));
        }
        return mix(h ^ (to - from));
    }

    /** SplitMix64's finalizer: every input bit moves every output bit. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
