package dev.tandem.router.scheduling;

import java.util.Map;
import java.util.Set;

/**
 * The request-side input of a scheduling decision.
 *
 * @param affinityWorkerId  the decode worker recorded for the session, or null
 * @param tick              a counter the caller advances per decision: round-robin without hidden state
 * @param avoid             workers that already failed this request
 * @param modelFingerprints the model fingerprints a worker may have (KV moves only within one), or null for any
 * @param promptBlocks      full KV blocks in the prompt (0 when no worker announces a KV cache)
 * @param cachedBlocks      per worker, how many of the prompt's leading blocks its KV caches hold (from
 *                          the router's prefix index; under the {@code cache-aware} policy, how many this
 *                          router routed to it; a worker not in the map holds none)
 * @param routedBlocks      per worker, how many blocks this router remembers having routed to it (its
 *                          routed-prefix tree's size, read by the {@code cache-aware} picker; empty under
 *                          policies that keep no such record; a worker not in the map has none)
 * @param hashes            the prompt's block hashes per model, for plugins that remember prefixes
 *                          ({@link RoutedPrefixes})
 */
public record SchedulingRequest(
        String sessionKey,
        String affinityWorkerId,
        int promptTokens,
        long tick,
        Set<String> avoid,
        Set<Long> modelFingerprints,
        int promptBlocks,
        Map<String, Integer> cachedBlocks,
        Map<String, Long> routedBlocks,
        PromptHashes hashes) {

    public SchedulingRequest {
        avoid = Set.copyOf(avoid);
        modelFingerprints = modelFingerprints == null ? null : Set.copyOf(modelFingerprints);
        cachedBlocks = Map.copyOf(cachedBlocks);
        routedBlocks = Map.copyOf(routedBlocks);
    }

    /** No record of routed blocks. */
    public SchedulingRequest(
            String sessionKey,
            String affinityWorkerId,
            int promptTokens,
            long tick,
            Set<String> avoid,
            Set<Long> modelFingerprints,
            int promptBlocks,
            Map<String, Integer> cachedBlocks) {
        this(
                sessionKey,
                affinityWorkerId,
                promptTokens,
                tick,
                avoid,
                modelFingerprints,
                promptBlocks,
                cachedBlocks,
                Map.of(),
                PromptHashes.NONE);
    }

    /** Nothing known of cached prefixes. */
    public SchedulingRequest(
            String sessionKey,
            String affinityWorkerId,
            int promptTokens,
            long tick,
            Set<String> avoid,
            Set<Long> modelFingerprints) {
        this(sessionKey, affinityWorkerId, promptTokens, tick, avoid, modelFingerprints, 0, Map.of());
    }

    /** A first attempt, any model. */
    public SchedulingRequest(String sessionKey, String affinityWorkerId, int promptTokens, long tick) {
        this(sessionKey, affinityWorkerId, promptTokens, tick, Set.of(), null);
    }

    /** This request as a router that routed {@code cachedBlocks} of the prompt where they say sees it. */
    public SchedulingRequest withRoutedPrefixes(Map<String, Integer> cachedBlocks, Map<String, Long> routedBlocks) {
        return new SchedulingRequest(
                sessionKey,
                affinityWorkerId,
                promptTokens,
                tick,
                avoid,
                modelFingerprints,
                promptBlocks,
                cachedBlocks,
                routedBlocks,
                hashes);
    }

    /** The prompt's leading blocks {@code workerId}'s caches hold. */
    public int cachedBlocks(String workerId) {
        return cachedBlocks.getOrDefault(workerId, 0);
    }

    /** The blocks this router remembers having routed to {@code workerId}. */
    public long routedBlocks(String workerId) {
        return routedBlocks.getOrDefault(workerId, 0L);
    }
}
