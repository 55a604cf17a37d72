package dev.tandem.router.scaling;

/**
 * How many workers of each role one model's load needs, with the terms behind the counts.
 *
 * @param prefillWorkers   prefill workers recommended (at least {@code scaling.min-workers})
 * @param decodeWorkers    decode workers recommended (at least {@code scaling.min-workers})
 * @param prefillFromRate  workers the arriving prompt tokens need, unrounded
 * @param prefillFromQueue workers that drain the queued prompt tokens within the target, unrounded
 * @param decodeFromBatch  workers the active sequences need at the target batch occupancy, unrounded
 * @param decodeFromKv     workers the KV held needs at the target KV use, unrounded
 * @param prefillRate      the per-worker prefill rate used (tokens/s): measured, else the prior; 0 when neither
 *                         was known and the prefill pool was kept as it is
 */
public record ScalingRecommendation(
        String model,
        int prefillWorkers,
        int decodeWorkers,
        double prefillFromRate,
        double prefillFromQueue,
        double decodeFromBatch,
        double decodeFromKv,
        double prefillRate) {

    /** Prefill : decode workers recommended (prefill alone while no decode worker is recommended). */
    public double pdRatio() {
        return decodeWorkers == 0 ? prefillWorkers : (double) prefillWorkers / decodeWorkers;
    }
}
