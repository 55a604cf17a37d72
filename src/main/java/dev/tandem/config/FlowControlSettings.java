package dev.tandem.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Flow control ({@code flow-control}): who a request is from, what that tenant may have, and how the router
 * queues when the workers are saturated. See the flow-control page of the docs.
 *
 * @param tenantHeader            with no API keys, the header that names the tenant ({@code X-Tenant-Id})
 * @param tenantFromUser          with no API keys and no tenant header, the body's {@code user} names the tenant.
 *                                Off by default: {@code user} usually names an end user, and a tenant is a
 *                                metric label
 * @param defaultTenant           the tenant of a request nothing names one for
 * @param tenants                 configured tenants by name; one not listed gets {@link #defaults()}
 * @param defaults                what an unlisted tenant gets ({@code flow-control.default-priority} and the
 *                                default quotas)
 * @param queue                   when the router queues, and how long a request may wait
 * @param fairness                within a priority band, serve the tenant served least so far (virtual token
 *                                counter); off: first come, first served
 * @param fairnessCreditTokens    tokens of credit a tenant that starts waiting keeps below the busiest
 *                                tenants' counters: its short burst goes first
 * @param quotaFailOpen           when the cluster's quota counters cannot be reached (a partition): admit
 *                                ({@code open}) or refuse with 503 ({@code closed})
 * @param quotaTimeoutMs          how long a quota check may take before it counts as unreachable
 * @param maxTenantLabels         distinct tenants named in metrics; the rest are counted as {@code other}
 */
public record FlowControlSettings(
        String tenantHeader,
        boolean tenantFromUser,
        String defaultTenant,
        Map<String, TenantSettings> tenants,
        TenantSettings defaults,
        QueueSettings queue,
        boolean fairness,
        long fairnessCreditTokens,
        boolean quotaFailOpen,
        long quotaTimeoutMs,
        int maxTenantLabels) {

    /**
     * @param maxPerTenant           requests one tenant may have waiting; beyond, 429 {@code queue_full}
     * @param maxTotal               requests that may wait in all (per model); when full, the heaviest tenant's
     *                               newest request makes room for a lighter tenant's (429 {@code queue_full}).
     *                               Waiting requests hold no place of {@code router.max-in-flight}
     * @param timeoutMs              how long a request may wait when it names no deadline
     *                               ({@code X-Request-Timeout-Ms}); then 429 {@code queue_timeout}
     * @param maxQueuedPrefillTokens a prefill worker with this many prompt tokens queued or in flight is
     *                               saturated; when every one is (or every decode worker is over its KV or
     *                               sequence limit), requests wait in the router's queue
     * @param maxQueuedPrefillMs     the same bound in time: a prefill worker whose queued tokens take it this
     *                               long at its measured rate is saturated (0: tokens only). Small, so that
     *                               the order is decided in the router's queue, where priorities and fairness
     *                               apply, and not in a worker's, where they cannot
     * @param maxKvFraction          a decode worker using this share of its KV memory is saturated
     */
    public record QueueSettings(
            int maxPerTenant,
            int maxTotal,
            long timeoutMs,
            long maxQueuedPrefillTokens,
            long maxQueuedPrefillMs,
            double maxKvFraction) {}

    static FlowControlSettings read(ConfigSection s) {
        TenantSettings defaults = new TenantSettings(
                s.integer("default-priority", 0, -1000, 1000),
                s.integer("default-requests-per-minute", 0L, 0, 1_000_000_000L),
                s.integer("default-tokens-per-minute", 0L, 0, 1L << 50));
        Map<String, TenantSettings> tenants = new LinkedHashMap<>();
        ConfigSection listed = s.section("tenants");
        for (String name : listed.names()) {
            ConfigSection t = listed.section(name);
            tenants.put(name, TenantSettings.read(t, defaults));
            t.rejectUnknownKeys();
        }
        listed.rejectUnknownKeys();
        FlowControlSettings f = new FlowControlSettings(
                s.string("tenant-header", "X-Tenant-Id"),
                s.bool("tenant-from-user", false),
                s.string("default-tenant", "default"),
                Map.copyOf(tenants),
                defaults,
                new QueueSettings(
                        s.integer("max-queued-per-tenant", 1024, 0, 1 << 20),
                        s.integer("max-queued", 8192, 0, 1 << 22),
                        s.integer("queue-timeout-ms", 30_000L, 1, 3_600_000L),
                        s.integer("max-queued-prefill-tokens", 16_384L, 1, 1L << 40),
                        s.integer("max-queued-prefill-ms", 25L, 0, 3_600_000L),
                        s.decimal("max-kv-fraction", 0.95, 0.01, 1)),
                s.bool("fairness", true),
                s.integer("fairness-credit-tokens", 16_384L, 0, 1L << 40),
                s.choice("quota-partition", "open", List.of("open", "closed")).equals("open"),
                s.integer("quota-timeout-ms", 1_000L, 1, 60_000),
                s.integer("max-tenant-labels", 100, 1, 100_000));
        s.rejectUnknownKeys();
        if (f.defaultTenant.isBlank() || f.tenantHeader.isBlank()) {
            throw new ConfigException(
                    "'flow-control.default-tenant' and 'flow-control.tenant-header' must not be empty");
        }
        return f;
    }

    /** What {@code tenant} gets: its configured settings, else the defaults. */
    public TenantSettings tenant(String tenant) {
        return tenants.getOrDefault(tenant, defaults);
    }

    /** These settings with fair queueing on or off (benchmarks compare both). */
    public FlowControlSettings withFairness(boolean on) {
        return new FlowControlSettings(
                tenantHeader,
                tenantFromUser,
                defaultTenant,
                tenants,
                defaults,
                queue,
                on,
                fairnessCreditTokens,
                quotaFailOpen,
                quotaTimeoutMs,
                maxTenantLabels);
    }
}
