package dev.tandem.worker;

/**
 * A worker's speed at one kind of work, from its own timings — prompt tokens per second of prefill, KV
 * bytes per second of transfer: an exponentially weighted average over its recent jobs, a job of at least
 * {@code span} units replacing {@link #ALPHA} of it and a smaller one (more overhead) in proportion. No
 * single job replaces more: a 120,000-token prompt's rate is half a 4,000-token one's on a 70B model
 * (attention grows with the square of the length), and one such prompt should not make a worker look
 * half as fast as its peers. Routers turn queued work into predicted time with it. Until the first job it
 * reports its prior (the engine's expectation, or 0).
 * Written by compute threads and event loops, read by the heartbeat.
 */
public final class Throughput {
    /** How much of the average a job of {@code span} units or more replaces. */
    private static final double ALPHA = 0.2;

    private final double span;
    private double perSecond;
    private boolean measured;

    /**
     * @param prior what to report before the first job (0: nothing known)
     * @param span  the size from which a job counts fully ({@link #ALPHA}); smaller ones count in proportion
     */
    public Throughput(double prior, double span) {
        if (!(span > 0)) {
            throw new IllegalArgumentException("span must be positive, got " + span);
        }
        this.perSecond = prior > 0 && Double.isFinite(prior) ? prior : 0;
        this.span = span;
    }

    /** Prefill speed in prompt tokens per second; a 512-token prompt counts fully. */
    public static Throughput prefillTokens(double prior) {
        return new Throughput(prior, 512);
    }

    /** A job did {@code units} of work in {@code nanos}; nothing is learnt from an empty or untimed one. */
    public synchronized void record(double units, long nanos) {
        if (!(units > 0) || nanos <= 0) {
            return;
        }
        double rate = units / (nanos / 1e9);
        if (!measured) {
            measured = true;
            perSecond = rate;
            return;
        }
        double weight = ALPHA * Math.min(1, units / span);
        perSecond += weight * (rate - perSecond);
    }

    /** The current estimate: the prior before the first job. */
    public synchronized double perSecond() {
        return perSecond;
    }
}
