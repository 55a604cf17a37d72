package dev.tandem.cluster;

import io.vertx.core.Future;

/**
 * Per-tenant quotas counted for the whole cluster: requests and tokens per clock minute, whichever router
 * replica a request reaches. {@link HazelcastTenantQuotas} in a node; a map in unit tests.
 */
public interface TenantQuotas {

    /**
     * Takes one request and {@code tokens} from the tenant's current minute, both or neither. Fails when the
     * counters cannot be reached (a partition, a timeout): the caller decides whether that admits.
     *
     * @param requestsPerMinute 0: not limited
     * @param tokensPerMinute   0: not limited
     */
    Future<QuotaDecision> take(String tenant, long requestsPerMinute, long tokensPerMinute, long tokens);

    /** Gives back tokens taken but not used (a request that generated fewer than its {@code max_tokens}). */
    void giveBack(String tenant, long window, long tokens);

    /** Nothing is limited: every take admits. */
    TenantQuotas UNLIMITED = new TenantQuotas() {
        @Override
        public Future<QuotaDecision> take(String tenant, long rpm, long tpm, long tokens) {
            return Future.succeededFuture(QuotaDecision.unlimited());
        }

        @Override
        public void giveBack(String tenant, long window, long tokens) {}
    };
}
