package dev.tandem.bench;

import java.util.Arrays;

/** Nearest-rank percentiles of a sample (NaN for an empty one). */
final class Percentiles {
    private final double[] sorted;

    Percentiles(double[] values) {
        this.sorted =
                Arrays.stream(values).filter(v -> !Double.isNaN(v)).sorted().toArray();
    }

    int count() {
        return sorted.length;
    }

    /** The value at {@code p} in [0, 100]: the smallest with at least p% of the sample at or below it. */
    double at(double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
    }

    double[] sorted() {
        return sorted.clone();
    }
}
