package dev.tandem.metrics;

import java.time.Duration;

/** Histogram buckets for LLM serving: where the service-level objectives of each latency lie. */
final class Buckets {
    private Buckets() {}

    /** Time to first token: interactive targets sit between 100 ms and a few seconds. */
    static final Duration[] TTFT =
            ms(10, 25, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 10_000, 30_000);
    /** Inter-token latency: a reader's pace is ~50 ms/token; decode steps are 5-100 ms. */
    static final Duration[] ITL = ms(1, 2, 5, 10, 15, 20, 30, 50, 75, 100, 150, 250, 500, 1000, 2500);
    /** End to end: a few tokens to thousands. */
    static final Duration[] E2E =
            ms(50, 100, 250, 500, 1000, 2500, 5000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000);
    /** Queueing, prefill compute, KV transfer. */
    static final Duration[] STAGE = ms(1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000);
    /** KV bytes per transfer: 64 KiB to 4 GiB. */
    static final double[] KV_BYTES = {
        1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28, 1 << 30, 4.0 * (1 << 30)
    };

    private static Duration[] ms(long... values) {
        Duration[] out = new Duration[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = Duration.ofMillis(values[i]);
        }
        return out;
    }
}
