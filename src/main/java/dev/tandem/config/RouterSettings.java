package dev.tandem.config;

import java.util.List;

/**
 * Router behaviour: deadlines, defaults, affinity retention and the two scheduling profiles.
 */
public record RouterSettings(long requestTimeoutMs, long prefillTimeoutMs, int defaultMaxTokens, int maxInFlight,
                             int affinityIdleSeconds, int affinityMaxEntries,
                             SchedulerSettings prefill, SchedulerSettings decode) {

  static RouterSettings read(ConfigSection s) {
    RouterSettings r = new RouterSettings(
        s.integer("request-timeout-ms", 120_000L, 100, 86_400_000L),
        s.integer("prefill-timeout-ms", 30_000L, 100, 3_600_000L),
        s.integer("default-max-tokens", 16, 1, 1 << 20),
        s.integer("max-in-flight", 1024, 1, 1 << 20),
        s.integer("affinity-idle-seconds", 3600, 1, 30 * 86_400),
        s.integer("affinity-max-entries", 100_000, 1, 100_000_000),
        SchedulerSettings.read(s.section("prefill-scheduling"), List.of("not-draining"),
            List.of(new SchedulerSettings.WeightedPlugin("least-loaded", 1))),
        SchedulerSettings.read(s.section("decode-scheduling"), List.of("not-draining"),
            List.of(new SchedulerSettings.WeightedPlugin("session-affinity", 1))));
    s.rejectUnknownKeys();
    return r;
  }

  public RouterSettings withMaxInFlight(int max) {
    return new RouterSettings(requestTimeoutMs, prefillTimeoutMs, defaultMaxTokens, max, affinityIdleSeconds,
        affinityMaxEntries, prefill, decode);
  }

  public RouterSettings withRequestTimeoutMs(long ms) {
    return new RouterSettings(ms, prefillTimeoutMs, defaultMaxTokens, maxInFlight, affinityIdleSeconds, affinityMaxEntries,
        prefill, decode);
  }
}
