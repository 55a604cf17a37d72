package dev.tandem.bench;

import dev.tandem.bench.trace.TraceRequest;
import dev.tandem.config.ScalingSettings;
import dev.tandem.engine.sim.SimProfiles;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.router.scaling.ScalingAdvisor;
import dev.tandem.router.scaling.ScalingInputs;
import dev.tandem.router.scaling.ScalingRecommendation;
import dev.tandem.router.scaling.ScalingSnapshot;
import dev.tandem.router.scaling.TokenWindow;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * {@code tandem bench scaling}: the scaling signals under known load. One fresh sim cluster per scenario — a
 * base arrival rate, twice the rate, twice the output length — fed Poisson arrivals of unique prompts (no cache
 * hits: every prompt token is computed). Once the window has filled, every second it reads the router's
 * gauges, and feeds {@link ScalingAdvisor} the rates measured from the router's own counters (computed prompt
 * tokens, generated tokens) with the registry's worker loads, for the unrounded needs behind the counts.
 */
public final class ScalingBench {
    /** What to run; see {@link ScalingBenchCommand} for each option. */
    public record Options(
            int prefill,
            int decode,
            int routers,
            String profile,
            double rate,
            int promptTokens,
            int outputTokens,
            int seconds,
            int windowSeconds,
            int maxBatch,
            long seed) {}

    /** One scenario's averages over its samples. */
    record Row(
            String name,
            double rate,
            int output,
            double promptPerSec,
            double outputPerSec,
            double perWorkerPrefill,
            double sequences,
            double prefillNeed,
            double decodeNeed,
            double prefillGauge,
            double decodeGauge,
            double ratioGauge,
            double spread,
            int samples) {}

    private ScalingBench() {}

    public static List<Row> run(Options o, PrintStream console) {
        BenchLogging.quietUnlessVerbose();
        console.printf(
                "%d prefill + %d decode sim workers (%s, max-batch %d), %d router(s); %d s per scenario, window %d s%n",
                o.prefill(), o.decode(), o.profile(), o.maxBatch(), o.routers(), o.seconds(), o.windowSeconds());
        List<Row> rows = new ArrayList<>();
        rows.add(scenario("base", o.rate(), o.outputTokens(), o, console));
        rows.add(scenario("2x rate", 2 * o.rate(), o.outputTokens(), o, console));
        rows.add(scenario("2x output", o.rate(), 2 * o.outputTokens(), o, console));
        console.print(table(rows));
        return rows;
    }

    /** Poisson arrivals at {@code rate} a second for {@code seconds}, every prompt its own (no shared prefix). */
    static List<TraceRequest> arrivals(double rate, int prompt, int output, int seconds, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<TraceRequest> out = new ArrayList<>();
        double t = 0;
        while (true) {
            t += -Math.log(1 - random.nextDouble()) / rate;
            if (t >= seconds) {
                return out;
            }
            out.add(new TraceRequest(Math.round(t * 1000), prompt, output));
        }
    }

    private static Row scenario(String name, double rate, int output, Options o, PrintStream console) {
        SimCluster.Shape shape = SimCluster.Shape.of(
                o.prefill(), o.decode(), o.routers(), SimProfiles.named(o.profile()), 1, 16, 1L << 30, 0, false);
        JsonObject overrides = new JsonObject()
                .put("worker", new JsonObject().put("max-batch", o.maxBatch()))
                .put("scaling", new JsonObject().put("window-seconds", o.windowSeconds()));
        List<TraceRequest> requests = arrivals(rate, o.promptTokens(), output, o.seconds(), o.seed());
        Vertx client = Vertx.vertx();
        try (SimCluster cluster = SimCluster.start(shape, "default", overrides)) {
            TraceReplay replay = new TraceReplay(client, cluster.httpPorts(), cluster.model(), 1);
            Future<List<RequestResult>> done =
                    replay.replay(requests, RouteBench.TOKENS, o.seconds() * 1000L + 120_000);
            Row row = sample(name, rate, output, o, cluster.routers(), cluster.model());
            List<RequestResult> results = done.await();
            long failed = results.stream().filter(r -> !r.ok()).count();
            console.printf("  %s: %d requests (%d failed), %d samples%n", name, results.size(), failed, row.samples());
            return row;
        } finally {
            client.close().await();
        }
    }

    /**
     * Every second from when the window is full to the end of the arrivals: the averages. The rates are the
     * routers' counters summed; the gauges are the largest over the replicas (what the KEDA query reads), and
     * the spread how far the replicas' prefill recommendations were apart.
     */
    private static Row sample(String name, double rate, int output, Options o, List<TandemNode> routers, String model) {
        ScalingSettings targets = ScalingSettings.DEFAULTS.withWindowSeconds(o.windowSeconds());
        List<MeterRegistry> registries = routers.stream()
                .map(r -> (MeterRegistry) r.metrics().registry())
                .toList();
        long start = System.nanoTime();
        List<double[]> counters = new ArrayList<>(); // {nanos, computed prompt tokens, generated tokens}
        double[] sums = new double[10];
        int samples = 0;
        for (int second = 1; second < o.seconds(); second++) {
            sleepUntil(start + second * 1_000_000_000L);
            long now = System.nanoTime();
            counters.add(new double[] {
                now, count(registries, "tandem.prompt.tokens.computed"), count(registries, "tandem.generated.tokens")
            });
            if (second < o.windowSeconds() + 2) {
                continue; // the window and the pools fill first
            }
            double[] first = counters.get(counters.size() - 1 - o.windowSeconds());
            double[] last = counters.get(counters.size() - 1);
            double seconds = (last[0] - first[0]) / 1e9;
            TokenWindow.Rates rates =
                    new TokenWindow.Rates((last[1] - first[1]) / seconds, (last[2] - first[2]) / seconds);
            List<WorkerDescriptor> workers = routers.get(0).router().directory().all();
            ScalingSnapshot s =
                    ScalingInputs.snapshots(workers, Map.of(model, rates)).get(0);
            ScalingRecommendation r = ScalingAdvisor.advise(s, targets);
            double[] row = {
                rates.uncachedPromptTokensPerSec(),
                rates.outputTokensPerSec(),
                s.prefillTokensPerSecPerWorker(),
                s.activeSequences(),
                r.prefillFromRate() + r.prefillFromQueue(),
                Math.max(r.decodeFromBatch(), r.decodeFromKv()),
                max(registries, "tandem.scaling.recommended.workers", "prefill"),
                max(registries, "tandem.scaling.recommended.workers", "decode"),
                max(registries, "tandem.scaling.pd.ratio", null),
                max(registries, "tandem.scaling.recommended.workers", "prefill")
                        - min(registries, "tandem.scaling.recommended.workers", "prefill")
            };
            for (int i = 0; i < row.length; i++) {
                sums[i] += row[i];
            }
            samples++;
        }
        double n = Math.max(1, samples);
        return new Row(
                name,
                rate,
                output,
                sums[0] / n,
                sums[1] / n,
                sums[2] / n,
                sums[3] / n,
                sums[4] / n,
                sums[5] / n,
                sums[6] / n,
                sums[7] / n,
                sums[8] / n,
                sums[9] / n,
                samples);
    }

    private static double count(List<MeterRegistry> registries, String name) {
        double sum = 0;
        for (MeterRegistry registry : registries) {
            Counter c = registry.find(name).counter();
            sum += c == null ? 0 : c.count();
        }
        return sum;
    }

    private static double max(List<MeterRegistry> registries, String name, String role) {
        return registries.stream().mapToDouble(r -> gauge(r, name, role)).max().orElse(Double.NaN);
    }

    private static double min(List<MeterRegistry> registries, String name, String role) {
        return registries.stream().mapToDouble(r -> gauge(r, name, role)).min().orElse(Double.NaN);
    }

    private static double gauge(MeterRegistry registry, String name, String role) {
        var search = registry.find(name);
        Gauge g = (role == null ? search : search.tag("role", role)).gauge();
        return g == null ? Double.NaN : g.value();
    }

    private static void sleepUntil(long nanos) {
        long ms = (nanos - System.nanoTime()) / 1_000_000;
        if (ms > 0) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /** The rows as a Markdown table, as the operations page shows them. */
    static String table(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append("| scenario | req/s | output tokens | computed prompt tok/s | output tok/s "
                + "| prefill tok/s per worker | active sequences | prefill need | decode need "
                + "| recommended prefill | recommended decode | pd ratio | replicas' prefill spread |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            sb.append(String.format(
                    Locale.ROOT,
                    "| %s | %.1f | %d | %.0f | %.0f | %.0f | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |%n",
                    r.name(),
                    r.rate(),
                    r.output(),
                    r.promptPerSec(),
                    r.outputPerSec(),
                    r.perWorkerPrefill(),
                    r.sequences(),
                    r.prefillNeed(),
                    r.decodeNeed(),
                    r.prefillGauge(),
                    r.decodeGauge(),
                    r.ratioGauge(),
                    r.spread()));
        }
        return sb.toString();
    }
}
