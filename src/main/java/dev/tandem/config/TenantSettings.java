package dev.tandem.config;

/**
 * What a tenant is allowed: its priority band (higher is served first when the pools are saturated) and
 * its quotas, held cluster-wide (0 = no quota).
 *
 * @param priority          the band its requests queue in; higher first
 * @param requestsPerMinute requests admitted per clock minute over every router replica together
 * @param tokensPerMinute   prompt + {@code max_tokens} reserved per clock minute (unused tokens are given
 *                          back when a request ends), over every replica together
 */
public record TenantSettings(int priority, long requestsPerMinute, long tokensPerMinute) {
    public static final TenantSettings DEFAULT = new TenantSettings(0, 0, 0);

    /** True when the tenant has a quota to check. */
    public boolean limited() {
        return requestsPerMinute > 0 || tokensPerMinute > 0;
    }

    /** These settings with whatever {@code s} sets in its place ({@code priority}, the two quotas). */
    static TenantSettings read(ConfigSection s, TenantSettings base) {
        return new TenantSettings(
                s.integer("priority", base.priority, -1000, 1000),
                s.integer("requests-per-minute", base.requestsPerMinute, 0, 1_000_000_000L),
                s.integer("tokens-per-minute", base.tokensPerMinute, 0, 1L << 50));
    }
}
