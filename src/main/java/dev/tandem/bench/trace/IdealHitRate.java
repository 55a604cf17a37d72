package dev.tandem.bench.trace;

import dev.tandem.protocol.BlockHashes;
import java.util.List;

/**
 * The prefix-cache hit rate of one infinite cache shared by every worker: the ceiling no routing policy
 * over any number of workers can beat. It follows Tandem's own rules, so it is comparable with the
 * {@code cached_tokens} the workers report: blocks are named by {@link BlockHashes} (the workers'
 * function), a prompt of n tokens reuses its leading stored full blocks up to the first miss but at most
 * {@code (n - 1) / blockSize} of them (its last token is always computed, to produce the first output
 * token), and once served all of its {@code n / blockSize} full blocks are stored.
 *
 * <p>Feed prompts in arrival order with {@link #add}; its return value is that request's cached tokens.
 */
public final class IdealHitRate {
    /** Σ cached prompt tokens ÷ Σ prompt tokens (0 for no tokens), and the two sums. */
    public record Result(double hitRate, long cachedTokens, long promptTokens) {
        static Result of(long cachedTokens, long promptTokens) {
            return new Result(promptTokens == 0 ? 0 : (double) cachedTokens / promptTokens, cachedTokens, promptTokens);
        }
    }

    private final long fingerprint;
    private final int blockSize;
    private final LongSet stored = new LongSet();
    private long cachedTokens;
    private long promptTokens;

    /** @param fingerprint the model fingerprint the workers hash blocks with */
    public IdealHitRate(long fingerprint, int blockSize) {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be positive, got " + blockSize);
        }
        this.fingerprint = fingerprint;
        this.blockSize = blockSize;
    }

    /** Serves the next prompt in arrival order: returns the tokens it finds cached, then caches its blocks. */
    public int add(int[] prompt) {
        long[] blocks = BlockHashes.of(fingerprint, blockSize, prompt);
        int reusable = Math.max(0, (prompt.length - 1) / blockSize);
        int hits = 0;
        while (hits < reusable && stored.contains(blocks[hits])) {
            hits++;
        }
        for (long block : blocks) {
            stored.add(block);
        }
        int cached = hits * blockSize;
        cachedTokens += cached;
        promptTokens += prompt.length;
        return cached;
    }

    /** The totals over every prompt added so far. */
    public Result result() {
        return Result.of(cachedTokens, promptTokens);
    }

    /** The ideal hit rate of {@code prompts}, in arrival order. */
    public static double of(List<int[]> prompts, long fingerprint, int blockSize) {
        IdealHitRate ideal = new IdealHitRate(fingerprint, blockSize);
        prompts.forEach(ideal::add);
        return ideal.result().hitRate();
    }

    /**
     * The ideal hit rate of the first {@code maxRequests} requests of {@code trace} (all when {@code <= 0}),
     * deriving one prompt at a time: the conversation trace's prompts together are ~145M tokens.
     */
    public static Result of(Trace trace, TraceTokens tokens, long fingerprint, int blockSize, int maxRequests) {
        List<TraceRequest> requests = trace.requests();
        int n = maxRequests <= 0 ? requests.size() : Math.min(maxRequests, requests.size());
        IdealHitRate ideal = new IdealHitRate(fingerprint, blockSize);
        for (int i = 0; i < n; i++) {
            ideal.add(tokens.prompt(requests.get(i), i));
        }
        return ideal.result();
    }
}
