package dev.tandem.bench;

import dev.tandem.bench.trace.IdealHitRate;
import dev.tandem.bench.trace.Trace;
import dev.tandem.bench.trace.TraceReader;
import dev.tandem.bench.trace.TraceRequest;
import dev.tandem.bench.trace.TraceTokens;
import dev.tandem.engine.sim.SimEngine;
import dev.tandem.engine.sim.SimProfile;
import dev.tandem.engine.sim.SimProfiles;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code tandem bench route}: replays a trace through a fresh sim cluster once per policy and compares
 * what the policies' choices did to cache hits, time to first token and throughput.
 */
public final class RouteBench {

    /** Printable ASCII: a trace's prompts stay readable in logs, and the sim's byte vocabulary holds them. */
    static final TraceTokens TOKENS = new TraceTokens(32, 127);

    /** What to run; see {@link RouteBenchCommand} for each option's meaning. */
    public record Options(
            Path trace,
            int prefill,
            int decode,
            int routers,
            List<String> policies,
            double timeScale,
            int maxRequests,
            String profile,
            Path out,
            int blockSize,
            double prefixCacheGb,
            int localPrefillMaxTokens,
            String via,
            List<TenantSpec> tenants,
            boolean fairness,
            int warmUp) {

        /** {@code --via}: sim workers direct, or sim vLLM instances behind upstream workers. */
        public static final String DIRECT = "direct";

        public static final String UPSTREAM = "upstream";
    }

    /** Requests replayed, unmeasured, before the first policy: a cold JVM would otherwise handicap it. */
    static final int WARM_UP_REQUESTS = 200;

    private RouteBench() {}

    public static JsonObject run(Options o, PrintStream console) throws IOException {
        Trace trace = TraceReader.read(o.trace(), o.maxRequests());
        List<TraceRequest> requests = trace.requests();
        TenantArrivals arrivals =
                o.tenants().isEmpty() ? null : TenantArrivals.of(requests, o.tenants(), requests.size());
        if (arrivals != null) {
            requests = arrivals.requests();
            trace = new Trace(trace.name(), requests); // the ideal hit rate of what is sent
        }
        SimProfile profile = SimProfiles.named(o.profile());
        long prefixCache = o.prefixCacheGb() > 0 ? (long) (o.prefixCacheGb() * 1e9) : profile.kvMemoryBytes();
        SimCluster.Shape shape = shape(o, profile, prefixCache);
        long fingerprint = new SimEngine(profile, 1, o.blockSize()).info().fingerprint();
        double ideal =
                IdealHitRate.of(trace, TOKENS, fingerprint, o.blockSize(), 0).hitRate();
        long spanMs =
                requests.get(requests.size() - 1).arrivalMs() - requests.get(0).arrivalMs();
        console.printf(
                "%s: %d requests over %.0f s of trace (%.0f s at %.1fx); %d prefill + %d decode sim workers (%s, "
                        + "prefix cache %.0f GB each, local prefill up to %d tokens)%s, %d router(s); ideal hit rate "
                        + "%.3f%n",
                trace.name(),
                requests.size(),
                spanMs / 1e3,
                spanMs / 1e3 / o.timeScale(),
                o.timeScale(),
                o.prefill(),
                o.decode(),
                profile.name(),
                prefixCache / 1e9,
                o.localPrefillMaxTokens(),
                shape.viaUpstream() ? " each behind a sim vLLM instance and an upstream worker" : "",
                o.routers(),
                ideal);
        // Generous, but bounded: a stuck run ends with its open requests counted as errors.
        long deadlineMs = (long) (spanMs / o.timeScale()) * 3 + 180_000;
        // The request log line per request would drown the progress bar; warnings and errors still show.
        BenchLogging.quietUnlessVerbose();
        List<PolicyResult> results = new ArrayList<>();
        Vertx client = Vertx.vertx();
        try {
            if (o.warmUp() > 0) {
                List<TraceRequest> warmUp = requests.subList(0, Math.min(o.warmUp(), requests.size()));
                runPolicy(o.policies().get(0), "warm-up", shape, client, warmUp, null, deadlineMs, console);
            }
            for (int i = 0; i < o.policies().size(); i++) {
                String policy = o.policies().get(i);
                PolicyResult result = runPolicy(
                        policy,
                        "[" + (i + 1) + "/" + o.policies().size() + "] " + policy,
                        shape,
                        client,
                        requests,
                        arrivals,
                        deadlineMs,
                        console);
                if (arrivals != null) {
                    result = result.withTenants(
                            TenantResult.of(result.requests(), arrivals.tenants(), o.tenants(), o.timeScale()));
                    console.print(TenantRuns.table(result.tenants()));
                }
                results.add(result);
                // Each policy's figures on disk as it ends: a long run that stops later keeps them.
                BenchReport.write(
                        o.out(),
                        BenchReport.summary(trace.name(), requests.size(), ideal, results),
                        results,
                        o.timeScale());
            }
        } finally {
            client.close().await();
        }
        // Written already, with the last policy's figures.
        JsonObject summary = BenchReport.summary(trace.name(), requests.size(), ideal, results);
        console.print(BenchReport.table(summary));
        console.print(BaselineRatios.table(summary));
        console.print(ShortBehindLong.table(results, o.timeScale()));
        console.println("written: " + o.out().resolve("summary.json") + ", results.csv, report.html");
        return summary;
    }

    /** The cluster every policy's run gets afresh. */
    private static SimCluster.Shape shape(Options o, SimProfile profile, long prefixCache) {
        return SimCluster.Shape.of(
                        o.prefill(),
                        o.decode(),
                        o.routers(),
                        profile,
                        o.timeScale(),
                        o.blockSize(),
                        prefixCache,
                        o.localPrefillMaxTokens(),
                        Options.UPSTREAM.equals(o.via()))
                .withFlowControl(TenantRuns.flowControl(o.tenants(), o.fairness(), o.timeScale()));
    }

    /** Attempts at starting a policy's cluster: a start can fail for its own sake, not the policy's. */
    static final int CLUSTER_START_ATTEMPTS = 3;

    /**
     * A fresh cluster for one policy. Nothing of a failed start reaches the results — no request was
     * sent — so it is closed and started again, and the retry is said on the console.
     */
    private static BenchCluster startCluster(SimCluster.Shape shape, String policy, PrintStream console) {
        for (int attempt = 1; ; attempt++) {
            try {
                return BenchCluster.start(shape, policy);
            } catch (RuntimeException e) {
                if (attempt >= CLUSTER_START_ATTEMPTS) {
                    throw e;
                }
                console.println("  the cluster for " + policy + " did not start (" + e.getMessage() + "); again");
            }
        }
    }

    private static PolicyResult runPolicy(
            String policy,
            String label,
            SimCluster.Shape shape,
            Vertx client,
            List<TraceRequest> requests,
            TenantArrivals arrivals,
            long deadlineMs,
            PrintStream console) {
        try (BenchCluster cluster = startCluster(shape, policy, console)) {
            TraceReplay replay = new TraceReplay(client, cluster.httpPorts(), cluster.model(), shape.timeScale());
            if (arrivals != null) {
                replay.withTenants(
                        arrivals.tenants().stream().map(TenantSpec::name).toList());
            }
            long start = System.nanoTime();
            List<RequestResult> results;
            try (ProgressBar bar =
                    new ProgressBar(console, label, requests.size(), replay.done::get, replay.errors::get)) {
                results = replay.replay(requests, TOKENS, deadlineMs).await();
            }
            double wallSeconds = (System.nanoTime() - start) / 1e9;
            console.println("  " + cluster.timings(shape.timeScale()));
            return PolicyResult.of(
                    policy, results, wallSeconds, shape.timeScale(), cluster.kvBytesMoved(), cluster.localPrefills());
        }
    }
}
