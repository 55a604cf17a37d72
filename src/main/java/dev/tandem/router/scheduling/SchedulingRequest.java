package dev.tandem.router.scheduling;

import java.util.Set;

/**
 * The request-side input of a scheduling decision.
 *
 * @param affinityWorkerId  the decode worker recorded for the session, or null
 * @param tick              a counter the caller advances per decision: round-robin without hidden state
 * @param avoid             workers that already failed this request
 * @param modelFingerprints the model fingerprints a worker may have (KV moves only within one), or null for any
 */
public record SchedulingRequest(
        String sessionKey,
        String affinityWorkerId,
        int promptTokens,
        long tick,
        Set<String> avoid,
        Set<Long> modelFingerprints) {

    public SchedulingRequest {
        avoid = Set.copyOf(avoid);
        modelFingerprints = modelFingerprints == null ? null : Set.copyOf(modelFingerprints);
    }

    /** A first attempt, any model. */
    public SchedulingRequest(String sessionKey, String affinityWorkerId, int promptTokens, long tick) {
        this(sessionKey, affinityWorkerId, promptTokens, tick, Set.of(), null);
    }
}
