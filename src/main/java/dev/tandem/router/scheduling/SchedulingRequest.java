package dev.tandem.router.scheduling;

/**
 * The request-side input of a scheduling decision.
 *
 * @param affinityWorkerId the decode worker recorded for the session, or null
 * @param tick             a counter the caller advances per decision: round-robin without hidden state
 */
public record SchedulingRequest(String sessionKey, String affinityWorkerId, int promptTokens, long tick) {
}
