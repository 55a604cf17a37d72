package dev.tandem.config;

/**
 * Router behaviour: deadlines, defaults, affinity retention, load sharing between replicas and the two
 * scheduling profiles.
 *
 * @param policy               the named {@link SchedulingPolicy} the profiles start from
 * @param prefill              the effective prefill profile: the policy's, with what {@code prefill-scheduling}
 *                             sets in its place
 * @param decode               the effective decode profile, likewise with {@code decode-scheduling}
 * @param decodeStallTimeoutMs a decoding request that gets no token for this long is moved to another
 *                             decode worker (the worker is alive in the registry but stuck)
 * @param decodeStartTimeoutMs how long a decode worker may take to answer DECODE_REQUEST (it joins the
 *                             request to its batch; no compute) before the request moves elsewhere
 * @param localPrefillMaxTokens when the chosen decode worker holds a prompt's prefix and at most this many
 *                              tokens are left to compute, it prefills them itself (no prefill worker, no
 *                              KV transfer); 0 = never. Ignored under a policy without local prefill
 *                              ({@code cache-aware}): see {@link #schedulingPolicy()}
 * @param lowerTierHitFraction what a prompt block counts for in prefix scoring when a worker holds it only in
 *                             its cache's lower tier (a GPU engine's blocks offloaded to CPU memory): loading
 *                             it is cheaper than computing it, dearer than finding it on the GPU
 * @param loadReportMs         how often a replica publishes its in-flight load to the others (it also
 *                             publishes right after changes); a report older than four of these is dropped
 */
public record RouterSettings(
        long requestTimeoutMs,
        long prefillTimeoutMs,
        long decodeStartTimeoutMs,
        int defaultMaxTokens,
        int maxInFlight,
        int affinityIdleSeconds,
        int affinityMaxEntries,
        long decodeStallTimeoutMs,
        long loadReportMs,
        int localPrefillMaxTokens,
        double lowerTierHitFraction,
        String policy,
        SchedulerSettings prefill,
        SchedulerSettings decode) {

    static RouterSettings read(ConfigSection s) {
        SchedulingPolicy policy =
                SchedulingPolicy.named(s.choice("policy", SchedulingPolicy.DEFAULT, SchedulingPolicy.names()));
        RouterSettings r = new RouterSettings(
                s.integer("request-timeout-ms", 120_000L, 100, 86_400_000L),
                s.integer("prefill-timeout-ms", 30_000L, 100, 3_600_000L),
                s.integer("decode-start-timeout-ms", 10_000L, 100, 3_600_000L),
                s.integer("default-max-tokens", 16, 1, 1 << 20),
                s.integer("max-in-flight", 1024, 1, 1 << 20),
                s.integer("affinity-idle-seconds", 3600, 1, 30 * 86_400),
                s.integer("affinity-max-entries", 100_000, 1, 100_000_000),
                s.integer("decode-stall-timeout-ms", 30_000L, 100, 3_600_000L),
                s.integer("load-report-ms", 250L, 10, 60_000),
                s.integer("local-prefill-max-tokens", 256, 0, 1 << 20),
                s.decimal("lower-tier-hit-fraction", 0.5, 0, 1),
                policy.name(),
                SchedulerSettings.read(s.section("prefill-scheduling"), policy.prefill()),
                SchedulerSettings.read(s.section("decode-scheduling"), policy.decode()));
        s.rejectUnknownKeys();
        return r;
    }

    /** The named policy the profiles start from: where its prefixes come from, whether it prefills locally. */
    public SchedulingPolicy schedulingPolicy() {
        return SchedulingPolicy.named(policy);
    }

    /** A replica's report is counted for this long after it arrived. */
    public long loadReportTtlMs() {
        return 4 * loadReportMs;
    }
}
