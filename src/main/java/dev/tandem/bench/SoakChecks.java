package dev.tandem.bench;

import java.util.List;

/**
 * What a soak's reader looks at first. Growth is measured from minute 10 — by then the JIT has compiled the
 * request path and the caches have filled — to the end, after the traffic stopped and a last full GC; a
 * run shorter than 10 minutes uses its last minute ({@code baselineMinute} says which). NaN (null in the
 * summary) when a figure is missing.
 *
 * @param heapAfterGcEndOverMinute10 live heap at the end ÷ at the baseline minute: about 1 when nothing
 *                                   accumulates; the KV caches' contents count, so read it with
 *                                   {@code kvCacheBytes}
 * @param rssEndOverMinute10         the process's resident set, the same way (/proc for the embedded target)
 * @param maxMinuteTtftP99OverMedian the worst minute's TTFT p99 ÷ the median minute's (the JIT's warm-up is
 *                                   before minute 1): how far the worst minute strays (GC pauses, a stall),
 *                                   about 1 when steady
 */
record SoakChecks(
        int baselineMinute,
        double heapAfterGcEndOverMinute10,
        double rssEndOverMinute10,
        double maxMinuteTtftP99OverMedian,
        int errorsTotal) {

    static final int BASELINE_MINUTE = 10;

    static SoakChecks of(List<SoakMinute> minutes, List<TargetSample> samples, TargetSample end) {
        int baseline = Math.min(BASELINE_MINUTE, samples.size());
        TargetSample base = baseline == 0 ? TargetSample.UNKNOWN : samples.get(baseline - 1);
        double[] p99 = minutes.stream()
                .mapToDouble(SoakMinute::ttftP99Ms)
                .filter(v -> !Double.isNaN(v))
                .sorted()
                .toArray();
        double spread = p99.length == 0 ? Double.NaN : p99[p99.length - 1] / median(p99);
        int errors = minutes.stream().mapToInt(SoakMinute::errorsTotal).sum();
        return new SoakChecks(
                baseline,
                ratio(end.heapAfterGcBytes(), base.heapAfterGcBytes()),
                ratio(end.bestRssBytes(), base.bestRssBytes()),
                spread,
                errors);
    }

    /** The median of sorted values (the mean of the middle two for an even count). */
    static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static double ratio(double end, double base) {
        return base > 0 && !Double.isNaN(end) ? end / base : Double.NaN;
    }
}
