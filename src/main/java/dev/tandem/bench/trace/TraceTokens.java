package dev.tandem.bench.trace;

import dev.tandem.engine.SplitMix64;

/**
 * Prompt token ids for trace requests, derived so that the router and the workers see the trace's real
 * shared prefixes: in a Mooncake trace the token at offset j of the block with id h is a pure function of
 * (h, j), so equal ids give equal blocks and a partial last block is a prefix of the full block with its id.
 * A request without ids (Azure) gets tokens from (request index, position): no two requests share a prefix,
 * as the trace gives no reason to assume they would. Deterministic in every JVM (SplitMix64, no
 * {@link java.util.Random}), so two runs of a benchmark replay the same tokens.
 */
public final class TraceTokens {
    /** Prompt tokens per Mooncake hash id. */
    public static final int TRACE_BLOCK_TOKENS = 512;

    // Separate streams for block ids and request indexes, so Azure request 7 is not Mooncake block 7.
    private static final long BLOCK_SALT = 0x6A09E667F3BCC908L;
    private static final long REQUEST_SALT = 0xBB67AE8584CAA73BL;

    private final int vocabLow;
    private final long span;

    /** Tokens are drawn from [vocabLow, vocabHigh): leave out ids the model treats specially (BOS, EOS). */
    public TraceTokens(int vocabLow, int vocabHigh) {
        if (vocabLow < 0 || vocabHigh <= vocabLow) {
            throw new IllegalArgumentException(
                    "token range [" + vocabLow + ", " + vocabHigh + ") is empty or negative");
        }
        this.vocabLow = vocabLow;
        this.span = (long) vocabHigh - vocabLow;
    }

    /** The {@code inputLength} prompt tokens of {@code r}, the {@code requestIndex}-th request of its trace. */
    public int[] prompt(TraceRequest r, int requestIndex) {
        int[] tokens = new int[r.inputLength()];
        long[] ids = r.hashIds();
        if (ids.length == 0) {
            long seed = SplitMix64.mix(requestIndex ^ REQUEST_SALT);
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = token(seed, i);
            }
            return tokens;
        }
        // TraceRequest guarantees ceil(inputLength / 512) ids: the last one covers the tail.
        for (int b = 0; b < ids.length; b++) {
            long seed = blockSeed(ids[b]);
            int from = b * TRACE_BLOCK_TOKENS;
            int to = Math.min(from + TRACE_BLOCK_TOKENS, tokens.length);
            for (int i = from; i < to; i++) {
                tokens[i] = token(seed, i - from);
            }
        }
        return tokens;
    }

    /** The token at {@code offset} (0..511) of the trace block with id {@code hashId}. */
    public int blockToken(long hashId, int offset) {
        return token(blockSeed(hashId), offset);
    }

    private static long blockSeed(long hashId) {
        return SplitMix64.mix(hashId ^ BLOCK_SALT);
    }

    /** The {@code index}-th draw of stream {@code seed}, scaled into the range by multiply-shift (no modulo). */
    private int token(long seed, int index) {
        long bits = SplitMix64.at(seed, index) >>> 32;
        return vocabLow + (int) ((bits * span) >>> 32);
    }
}
