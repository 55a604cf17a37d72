package dev.tandem.router.scheduling;

import dev.tandem.config.RouterSettings;
import dev.tandem.config.SchedulerSettings;
import dev.tandem.config.SchedulingPolicy;
import java.util.List;

/**
 * The named policies ({@link SchedulingPolicy}: {@code default}, {@code seed}, {@code round-robin},
 * {@code least-loaded}, {@code cache-aware}) as ready profiles, so that a benchmark can switch policy per
 * run. What a policy learns prefixes from and whether it prefills locally is the policy's own
 * ({@link SchedulingPolicy#prefixes()}, {@link SchedulingPolicy#localPrefill()}); a router's scheduler
 * applies it ({@code router/PairScheduler.forSettings}).
 */
public final class SchedulingPolicies {

    /** A policy's two profiles. */
    public record Profiles(SchedulingProfile prefill, SchedulingProfile decode) {}

    private SchedulingPolicies() {}

    /** The policies' names, {@code default} first. */
    public static List<String> names() {
        return SchedulingPolicy.names();
    }

    /** The profiles of the policy of that name; an unknown name is a ConfigException listing the known ones. */
    public static Profiles profiles(String policy) {
        SchedulingPolicy p = SchedulingPolicy.named(policy);
        return profiles(p.prefill(), p.decode());
    }

    /** The profiles a router's settings describe: its policy's, with what the file overrides. */
    public static Profiles profiles(RouterSettings settings) {
        return profiles(settings.prefill(), settings.decode());
    }

    private static Profiles profiles(SchedulerSettings prefill, SchedulerSettings decode) {
        return new Profiles(SchedulingPlugins.profile("prefill", prefill), SchedulingPlugins.profile("decode", decode));
    }
}
