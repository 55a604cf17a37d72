package dev.tandem.bench;

import dev.tandem.bench.trace.TraceFormatException;
import dev.tandem.config.SchedulingPolicy;
import dev.tandem.engine.sim.SimProfiles;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tandem bench route}: its options, checked, then {@link RouteBench}. */
@Command(
        name = "route",
        mixinStandardHelpOptions = true,
        description = "Replay a trace through a sim cluster once per scheduling policy and compare them.")
public final class RouteBenchCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--trace", required = true, description = "Mooncake JSONL or Azure CSV trace")
    Path trace;

    @Option(names = "--prefill", defaultValue = "8", description = "sim prefill workers (default ${DEFAULT-VALUE})")
    int prefill;

    @Option(names = "--decode", defaultValue = "8", description = "sim decode workers (default ${DEFAULT-VALUE})")
    int decode;

    @Option(names = "--routers", defaultValue = "1", description = "router replicas (default ${DEFAULT-VALUE})")
    int routers;

    @Option(
            names = "--policies",
            split = ",",
            defaultValue = "default,seed,round-robin,least-loaded,cache-aware",
            description = "policies to compare (default ${DEFAULT-VALUE})")
    List<String> policies;

    @Option(
            names = "--time-scale",
            defaultValue = "3",
            description = "simulated seconds per wall-clock second (default ${DEFAULT-VALUE}; higher saturates a small "
                    + "machine's CPU and the times measure it, not the policies)")
    double timeScale;

    @Option(names = "--max-requests", defaultValue = "0", description = "replay only the first N requests (0 = all)")
    int maxRequests;

    @Option(
            names = "--profile",
            defaultValue = SimProfiles.DEFAULT,
            description = "sim profile: model on accelerator (default ${DEFAULT-VALUE})")
    String profile;

    @Option(names = "--out", required = true, description = "directory for summary.json, results.csv, report.html")
    Path out;

    @Option(
            names = "--kv-block-size",
            defaultValue = "16",
            description = "tokens per KV block (default ${DEFAULT-VALUE})")
    int blockSize;

    @Option(
            names = "--prefix-cache-gb",
            defaultValue = "0",
            description = "each prefill worker's prefix cache in GB (default 0 = the profile's KV memory)")
    double prefixCacheGb;

    @Option(
            names = "--local-prefill-max-tokens",
            defaultValue = "256",
            description = "router.local-prefill-max-tokens: a decode worker holding the prefix prefills up to this "
                    + "many tokens itself (default ${DEFAULT-VALUE}, Tandem's default; 0 = never)")
    int localPrefillMaxTokens;

    @Option(
            names = "--via",
            defaultValue = RouteBench.Options.DIRECT,
            description = "direct: Tandem's own sim workers; upstream: each sim worker behind a built-in "
                    + "vLLM-compatible instance (P/D over kv_transfer_params, KV events over ZeroMQ) and an upstream "
                    + "worker, the path a GPU deployment takes (default ${DEFAULT-VALUE})")
    String via;

    @Option(
            names = "--tenants",
            description = "tenants sharing the cluster: NAME:priority=P:rate=R[,NAME:...]; each sends the trace's "
                    + "requests, drawn in order, as Poisson arrivals at R requests/s of trace time with priority P "
                    + "(higher first), its name in X-Tenant-Id")
    String tenants;

    @Option(
            names = "--fairness",
            defaultValue = "on",
            description = "on: fair queueing between tenants (virtual token counter); off: first come, first served "
                    + "(default ${DEFAULT-VALUE})")
    String fairness;

    @Option(
            names = "--warm-up",
            defaultValue = "" + RouteBench.WARM_UP_REQUESTS,
            description = "requests replayed, unmeasured, on a cluster of their own before the first policy, so a cold "
                    + "JVM does not handicap it (default ${DEFAULT-VALUE}; 0 = none)")
    int warmUp;

    @Override
    public Integer call() throws Exception {
        String invalid = invalid();
        if (invalid != null) {
            spec.commandLine().getErr().println("tandem bench route: " + invalid);
            return 2;
        }
        try {
            RouteBench.run(
                    new RouteBench.Options(
                            trace,
                            prefill,
                            decode,
                            routers,
                            List.copyOf(policies),
                            timeScale,
                            maxRequests,
                            profile,
                            out,
                            blockSize,
                            prefixCacheGb,
                            localPrefillMaxTokens,
                            via,
                            tenants == null ? List.of() : TenantSpec.parse(tenants),
                            fairness.equals("on"),
                            warmUp),
                    System.out);
        } catch (TraceFormatException | java.nio.file.NoSuchFileException e) {
            // Bad input is the user's to fix: one clear line, not a stack trace.
            spec.commandLine()
                    .getErr()
                    .println("tandem bench route: "
                            + (e instanceof java.nio.file.NoSuchFileException
                                    ? "no such trace file: " + e.getMessage()
                                    : e.getMessage()));
            return 2;
        }
        return 0;
    }

    private String invalid() {
        if (prefill < 1 || prefill > 256 || decode < 1 || decode > 256) {
            return "--prefill and --decode must be 1 to 256";
        }
        if (routers < 1 || routers > 16) {
            return "--routers must be 1 to 16";
        }
        if (!(timeScale > 0) || timeScale > 10_000) {
            return "--time-scale must be a positive number up to 10000";
        }
        if (warmUp < 0) {
            return "--warm-up must be 0 (none) or more";
        }
        if (maxRequests < 0) {
            return "--max-requests must be 0 (all) or more";
        }
        if (blockSize < 1 || blockSize > 4096 || prefixCacheGb < 0) {
            return "--kv-block-size must be 1 to 4096 and --prefix-cache-gb 0 or more";
        }
        if (localPrefillMaxTokens < 0) {
            return "--local-prefill-max-tokens must be 0 or more";
        }
        if (!List.of(RouteBench.Options.DIRECT, RouteBench.Options.UPSTREAM).contains(via)) {
            return "--via must be direct or upstream";
        }
        if (!List.of("on", "off").contains(fairness)) {
            return "--fairness must be on or off";
        }
        if (tenants != null) {
            try {
                TenantSpec.parse(tenants);
            } catch (IllegalArgumentException e) {
                return "--tenants: " + e.getMessage();
            }
        }
        if (!SimProfiles.names().contains(profile)) {
            return "unknown --profile '" + profile + "'; known: " + String.join(", ", SimProfiles.names());
        }
        if (new java.util.HashSet<>(policies).size() != policies.size()) {
            return "--policies names a policy twice";
        }
        for (String p : policies) {
            if (!SchedulingPolicy.names().contains(p)) {
                return "unknown policy '" + p + "'; known: " + String.join(", ", SchedulingPolicy.names());
            }
        }
        return null;
    }
}
