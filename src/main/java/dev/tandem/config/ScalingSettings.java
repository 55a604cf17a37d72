package dev.tandem.config;

/**
 * The targets the routers' scaling signals size the worker pools against ({@code scaling}): how many prefill
 * and decode workers each model's current load needs. See the operations page, "Scaling signals".
 *
 * @param targetQueueMs            queued prompt tokens should drain within this (ms): it is part of time to
 *                                 first token
 * @param targetPrefillUtilization the share of a prefill worker's measured rate the arriving prompt tokens may
 *                                 use: headroom, so that queueing does not inflate time to first token
 * @param targetBatchOccupancy     the share of a decode worker's batch ({@code worker.max-batch}) its sequences
 *                                 may fill
 * @param targetKvUse              the share of a decode worker's KV capacity its sequences may hold
 * @param windowSeconds            the sliding window over which admitted prompt and output tokens are counted:
 *                                 long enough to smooth bursts, short enough to follow the load
 * @param minWorkers               the fewest workers of each role recommended for a model that is served
 * @param priorPrefillTokensPerSecond a prefill worker's rate (tokens/s) assumed until one has measured its own;
 *                                 0: until then, recommend the prefill pool as it is
 */
public record ScalingSettings(
        long targetQueueMs,
        double targetPrefillUtilization,
        double targetBatchOccupancy,
        double targetKvUse,
        int windowSeconds,
        int minWorkers,
        double priorPrefillTokensPerSecond) {

    public static final ScalingSettings DEFAULTS = new ScalingSettings(1000, 0.7, 0.75, 0.8, 30, 1, 0);

    static ScalingSettings read(ConfigSection s) {
        ScalingSettings settings = new ScalingSettings(
                s.integer("target-queue-ms", DEFAULTS.targetQueueMs, 10, 600_000),
                s.decimal("target-prefill-utilization", DEFAULTS.targetPrefillUtilization, 0.05, 1),
                s.decimal("target-batch-occupancy", DEFAULTS.targetBatchOccupancy, 0.05, 1),
                s.decimal("target-kv-use", DEFAULTS.targetKvUse, 0.05, 1),
                s.integer("window-seconds", DEFAULTS.windowSeconds, 1, 3600),
                s.integer("min-workers", DEFAULTS.minWorkers, 0, 10_000),
                s.decimal("prior-prefill-tokens-per-second", DEFAULTS.priorPrefillTokensPerSecond, 0, 1e9));
        s.rejectUnknownKeys();
        return settings;
    }

    /** These targets over another window (the benchmark scales it to simulated time). */
    public ScalingSettings withWindowSeconds(int seconds) {
        return new ScalingSettings(
                targetQueueMs,
                targetPrefillUtilization,
                targetBatchOccupancy,
                targetKvUse,
                seconds,
                minWorkers,
                priorPrefillTokensPerSecond);
    }
}
