package dev.tandem.router;

import dev.tandem.config.TenantSettings;

/**
 * Who a request is from and what it asks of flow control: its tenant and that tenant's priority and
 * quotas, its own deadline ({@code X-Request-Timeout-Ms}) and time-to-first-token target
 * ({@code X-SLO-TTFT-Ms}).
 *
 * @param timeoutMs 0: the configured deadlines apply
 * @param sloTtftMs 0: none; else a request that cannot have its first token by then is refused early
 */
public record RequestClass(String tenant, TenantSettings settings, long timeoutMs, long sloTtftMs) {
    /** A request nothing classified (a test, a path without tenants): the default tenant, no deadline of its own. */
    public static final RequestClass DEFAULT = new RequestClass("default", TenantSettings.DEFAULT, 0, 0);

    public int priority() {
        return settings.priority();
    }
}
