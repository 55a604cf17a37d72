package dev.tandem.cluster;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a quota check gave: admitted or not, and the state of the tenant's minute after it — the figures
 * of OpenAI's {@code x-ratelimit-*} headers.
 *
 * @param window         the clock minute counted in (minutes since the epoch, cluster time)
 * @param resetMs        until the minute ends and the counters start again
 * @param requestsLimit  0: requests are not limited
 * @param tokensLimit    0: tokens are not limited
 */
public record QuotaDecision(
        boolean admitted,
        long window,
        long resetMs,
        long requestsLimit,
        long requestsUsed,
        long tokensLimit,
        long tokensUsed) {

    static QuotaDecision unlimited() {
        return new QuotaDecision(true, -1, 0, 0, 0, 0, 0);
    }

    public boolean limited() {
        return requestsLimit > 0 || tokensLimit > 0;
    }

    /** Which quota refused it: {@code requests} or {@code tokens}. */
    public String exhausted() {
        return requestsLimit > 0 && requestsUsed >= requestsLimit ? "requests" : "tokens";
    }

    /** Whole seconds until the counters reset, at least 1: the {@code Retry-After} of a refusal. */
    public long retryAfterSeconds() {
        return Math.max(1, (resetMs + 999) / 1000);
    }

    /** OpenAI's rate-limit headers for the quotas the tenant has (none when it has none). */
    public Map<String, String> headers() {
        Map<String, String> h = new LinkedHashMap<>();
        if (requestsLimit > 0) {
            h.put("x-ratelimit-limit-requests", Long.toString(requestsLimit));
            h.put("x-ratelimit-remaining-requests", Long.toString(Math.max(0, requestsLimit - requestsUsed)));
            h.put("x-ratelimit-reset-requests", duration(resetMs));
        }
        if (tokensLimit > 0) {
            h.put("x-ratelimit-limit-tokens", Long.toString(tokensLimit));
            h.put("x-ratelimit-remaining-tokens", Long.toString(Math.max(0, tokensLimit - tokensUsed)));
            h.put("x-ratelimit-reset-tokens", duration(resetMs));
        }
        return h;
    }

    /** As OpenAI writes its reset times: {@code 20ms}, {@code 1s}, {@code 6m0s}. */
    static String duration(long ms) {
        if (ms < 1000) {
            return ms + "ms";
        }
        long s = (ms + 999) / 1000;
        return s < 60 ? s + "s" : s / 60 + "m" + s % 60 + "s";
    }
}
