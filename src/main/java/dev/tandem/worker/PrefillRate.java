package dev.tandem.worker;

/**
 * A worker's prefill speed, from its own timings: prompt tokens computed per second of compute, an
 * exponentially weighted average over its recent prompts (each weighs by its tokens, so a one-token prompt
 * whose time is mostly overhead moves it little). Routers turn queued prompt tokens into predicted time
 * with it. Written by compute threads, read by the heartbeat.
 */
public final class PrefillRate {
    /** How much of the average a prompt of {@link #SPAN_TOKENS} tokens replaces. */
    private static final double ALPHA = 0.2;

    private static final double SPAN_TOKENS = 512;
    private double tokensPerSecond;

    /** A prompt's prefill computed {@code tokens} in {@code nanos}. */
    public synchronized void record(int tokens, long nanos) {
        if (tokens <= 0 || nanos <= 0) {
            return;
        }
        double rate = tokens / (nanos / 1e9);
        if (tokensPerSecond == 0) {
            tokensPerSecond = rate;
            return;
        }
        double weight = Math.min(1, ALPHA * tokens / SPAN_TOKENS);
        tokensPerSecond += weight * (rate - tokensPerSecond);
    }

    /** The current estimate; 0 before the first prompt. */
    public synchronized double tokensPerSecond() {
        return tokensPerSecond;
    }
}
