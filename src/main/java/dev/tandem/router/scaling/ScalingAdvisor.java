package dev.tandem.router.scaling;

import dev.tandem.config.ScalingSettings;

/**
 * How many prefill and decode workers a model's load needs under the {@code scaling} targets: a snapshot in,
 * a recommendation out. Pure (no clock, no cluster), so every router replica computes the same figures from
 * the same inputs, and tests feed it tables.
 *
 * <ul>
 *   <li>Prefill: {@code ceil(R / (P·u) + Q / (P·T))} — the arriving uncached prompt tokens per second {@code R}
 *       at the target utilisation {@code u} of one worker's measured rate {@code P}, plus the workers that
 *       drain the queued prompt tokens {@code Q} within the target queue time {@code T}. The first term
 *       follows arrivals before a queue builds; the second catches a queue that has built. With no measured
 *       rate the prior ({@code scaling.prior-prefill-tokens-per-second}) stands in; with neither, the pool as
 *       it is: no evidence to change it.
 *   <li>Decode: {@code ceil(max(S / (B·o), K / (C·k)))} — active sequences {@code S} against a worker's batch
 *       cap {@code B} at the target occupancy {@code o}, and KV bytes used {@code K} against a worker's
 *       capacity {@code C} at the target use {@code k}. By Little's law {@code S ≈ requests/s × output tokens
 *       × inter-token time}: decode load follows output tokens, and KV the context held while they are made.
 * </ul>
 *
 * Both are at least {@code scaling.min-workers}.
 */
public final class ScalingAdvisor {
    /** Needs this close above a whole number are that number: 2.0000001 workers are 2, not 3. */
    private static final double ROUNDING_SLACK = 1e-6;

    private ScalingAdvisor() {}

    public static ScalingRecommendation advise(ScalingSnapshot s, ScalingSettings targets) {
        double rate = s.prefillTokensPerSecPerWorker() > 0
                ? s.prefillTokensPerSecPerWorker()
                : targets.priorPrefillTokensPerSecond();
        double fromRate = 0;
        double fromQueue = 0;
        int prefill;
        if (rate > 0) {
            fromRate = Math.max(0, s.uncachedPromptTokensPerSec()) / (rate * targets.targetPrefillUtilization());
            fromQueue = Math.max(0, s.queuedPrefillTokens()) / (rate * targets.targetQueueMs() / 1000.0);
            prefill = workers(fromRate + fromQueue, targets.minWorkers());
        } else {
            prefill = Math.max(targets.minWorkers(), s.prefillWorkers());
        }
        double fromBatch = s.batchCapPerWorker() <= 0
                ? 0
                : s.activeSequences() / (s.batchCapPerWorker() * targets.targetBatchOccupancy());
        double fromKv = s.kvBytesCapacityPerWorker() <= 0
                ? 0
                : s.kvBytesUsed() / (s.kvBytesCapacityPerWorker() * targets.targetKvUse());
        int decode = workers(Math.max(fromBatch, fromKv), targets.minWorkers());
        return new ScalingRecommendation(s.model(), prefill, decode, fromRate, fromQueue, fromBatch, fromKv, rate);
    }

    private static int workers(double need, int min) {
        return (int) Math.max(min, Math.ceil(need - ROUNDING_SLACK));
    }
}
