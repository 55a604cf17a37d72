package dev.tandem.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Whether long prompts hold short ones up: per policy, the TTFT of the short prompts (fewer than {@link
 * #SHORT_TOKENS}) that arrived while a long one (at least {@link #LONG_TOKENS}) was waiting for its first
 * token — the requests a policy that queues behind long prompts makes wait seconds. Printed after the
 * run's tables when the trace has long prompts; times in the trace's time.
 */
final class ShortBehindLong {
    /** Where the Mooncake traces' long tail starts: 34 of the conversation trace's first 1,000 prompts. */
    static final int LONG_TOKENS = 60_000;

    /** A short prompt: under a second of prefill on the 70B profile. */
    static final int SHORT_TOKENS = 8_192;

    /** The short prompts' count and TTFT percentiles (NaN when there are none). */
    record Figures(int count, double ttftP50Ms, double ttftP99Ms, double ttftMaxMs) {}

    private ShortBehindLong() {}

    /**
     * The figures over the successful short requests that arrived during a long one's wait; arrivals are in
     * the trace's time, TTFTs in wall-clock time, made the trace's with {@code timeScale}.
     */
    static Figures of(List<RequestResult> requests, double timeScale) {
        List<double[]> longWaits = new ArrayList<>();
        for (RequestResult r : requests) {
            if (r.error() == null && r.promptTokens() >= LONG_TOKENS) {
                longWaits.add(new double[] {r.arrivalMs(), r.arrivalMs() + r.ttftMs() * timeScale});
            }
        }
        List<Double> ttfts = new ArrayList<>();
        for (RequestResult r : requests) {
            if (r.error() != null || r.promptTokens() >= SHORT_TOKENS) {
                continue;
            }
            for (double[] w : longWaits) {
                if (r.arrivalMs() >= w[0] && r.arrivalMs() < w[1]) {
                    ttfts.add(r.ttftMs() * timeScale);
                    break;
                }
            }
        }
        Percentiles p =
                new Percentiles(ttfts.stream().mapToDouble(Double::doubleValue).toArray());
        return new Figures(p.count(), p.at(50), p.at(99), p.at(100));
    }

    /** The table, one row per policy; empty when no policy's run had a long prompt and a short one behind it. */
    static String table(List<PolicyResult> results, double timeScale) {
        StringBuilder rows = new StringBuilder();
        for (PolicyResult result : results) {
            Figures f = of(result.requests(), timeScale);
            if (f.count() > 0) {
                rows.append(String.format(
                        Locale.ROOT,
                        "%-14s %8d %10.1f %10.1f %10.1f%n",
                        result.policy(),
                        f.count(),
                        f.ttftP50Ms(),
                        f.ttftP99Ms(),
                        f.ttftMaxMs()));
            }
        }
        if (rows.isEmpty()) {
            return "";
        }
        return String.format(
                        Locale.ROOT,
                        "prompts under %,d tokens that arrived while one of %,d or more waited for its first token%n",
                        SHORT_TOKENS,
                        LONG_TOKENS)
                + String.format(
                        Locale.ROOT, "%-14s %8s %10s %10s %10s%n", "policy", "requests", "TTFT p50", "TTFT p99", "max")
                + rows;
    }
}
