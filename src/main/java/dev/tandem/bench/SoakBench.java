package dev.tandem.bench;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * {@code tandem bench soak}: mixed traffic at a steady rate for a long time against one Tandem, watching
 * what must not drift — latency, errors, the live heap, resident memory, threads, descriptors, KV caches —
 * minute by minute, and the GC pauses the target took. Writes summary.json, minutes.csv, soak.svg.
 */
final class SoakBench {
    /**
     * @param target        null: start an embedded {@code tandem all} as a child JVM
     * @param secondsPerMinute the length of a "minute" (60; shorter only in tests)
     */
    record Options(
            int minutes,
            double rate,
            URI target,
            Path out,
            int maxInFlight,
            int requestTimeoutS,
            long seed,
            int webSockets,
            boolean gcEachMinute,
            String apiKey,
            String model,
            int secondsPerMinute,
            int warmupSeconds) {}

    /** What the traffic left: the summary (without the GC pauses, parsed once the target stopped) and the end. */
    private record Driven(JsonObject summary, TargetSample end, SoakMinute totals, Instant trafficStart) {}

    private SoakBench() {}

    static JsonObject run(Options o, PrintStream out) throws IOException {
        Files.createDirectories(o.out());
        BenchLogging.quietUnlessVerbose();
        Driven driven;
        Path gcLog;
        try (SoakTarget target = o.target() == null
                        ? SoakTarget.embedded(o.out(), o.model())
                        : SoakTarget.remote(SoakEndpoint.of(o.target(), o.apiKey()), o.model());
                TargetProbe probe = new TargetProbe(target.endpoint(), target.pid(), out)) {
            out.printf(
                    "soak: %s requests/s for %d minute%s against %s, model %s; results in %s%n",
                    o.rate(),
                    o.minutes(),
                    o.minutes() == 1 ? "" : "s",
                    target.describe(),
                    target.model(),
                    o.out().toAbsolutePath());
            driven = drive(o, target, probe, out);
            gcLog = target.gcLog();
        }
        // After the target stopped: its GC log is complete.
        GcPauses pauses = gcLog != null && Files.exists(gcLog)
                ? GcPauses.parse(Files.readAllLines(gcLog), driven.trafficStart())
                : null;
        JsonObject summary = driven.summary().put("gcPauses", SoakReport.gcPauses(pauses));
        SoakReport.write(o.out(), summary);
        out.print(SoakConsole.end(summary, driven.end(), driven.totals()));
        out.println("wrote summary.json, minutes.csv, soak.svg" + (gcLog == null ? "" : ", gc.log")
                + (o.target() == null ? ", target.log" : "") + " in " + o.out().toAbsolutePath());
        return summary;
    }

    private static Driven drive(Options o, SoakTarget target, TargetProbe probe, PrintStream out) throws IOException {
        Vertx vertx = Vertx.vertx();
        try {
            Context context = vertx.getOrCreateContext();
            HttpClient http = vertx.createHttpClient(
                    new HttpClientOptions().setKeepAlive(true).setTcpNoDelay(true),
                    new PoolOptions().setHttp1MaxSize(o.maxInFlight()));
            SoakHttp sse = new SoakHttp(http, target.endpoint());
            SoakWebSockets sockets = new SoakWebSockets(
                    vertx,
                    vertx.createWebSocketClient(new WebSocketClientOptions()
                            .setMaxConnections(o.maxInFlight() / SoakWebSockets.PER_SOCKET + o.webSockets() + 1)),
                    target.endpoint());
            onContext(context, () -> sockets.open(o.webSockets())).await(30, TimeUnit.SECONDS);
            SoakMix mix = new SoakMix(o.seed());
            SoakTraffic traffic = new SoakTraffic(
                    vertx,
                    context,
                    new SoakTraffic.Plan(
                            o.rate(),
                            o.minutes(),
                            o.secondsPerMinute() * 1000L,
                            o.maxInFlight(),
                            o.requestTimeoutS() * 1000L,
                            o.seed(),
                            o.warmupSeconds() * 1000L),
                    mix,
                    r -> {
                        JsonObject body = SoakMix.body(r, target.model());
                        return r.kind().webSocket ? sockets.send(r, body) : sse.send(r, body);
                    });
            Instant trafficStart = Instant.now();
            long start = traffic.start();
            if (o.warmupSeconds() > 0) {
                out.printf(
                        "warm-up: %d s, the rate rising from a tenth, not counted in the minutes%n", o.warmupSeconds());
            }
            List<TargetSample> samples = runMinutes(o, target, probe, traffic, start, out);
            awaitDrained(traffic, o.requestTimeoutS() + 10, out);
            // The end is read with the client's connections closed: its descriptors and threads are then
            // what the target keeps for nobody (an overloaded minute left 323 descriptors open at the end,
            // the pool's idle connections, where a quiet run had 49).
            onContext(context, sockets::close).await(10, TimeUnit.SECONDS);
            http.close().await(10, TimeUnit.SECONDS);
            sleepUntil(System.nanoTime() + TimeUnit.SECONDS.toNanos(1)); // the target closes its ends
            TargetSample end = probe.sample(target.embedded(), null, 0);
            List<SoakOutcome> all = traffic.outcomes();
            List<SoakOutcome> outcomes =
                    all.stream().filter(x -> x.minute() != SoakTraffic.WARM_UP).toList();
            return new Driven(
                    summary(o, target.json(), outcomes, samples, end, sockets.opened())
                            .put("warmup", warmupRow(all, o.warmupSeconds())),
                    end,
                    SoakMinute.of(0, outcomes),
                    trafficStart);
        } catch (TimeoutException e) {
            throw new IOException("the soak's client did not answer in time", e);
        } finally {
            vertx.close().await();
        }
    }

    /** Each minute: wait for its end, read the target (a full GC in a quiet gap at the baseline minute), print its row. */
    private static List<TargetSample> runMinutes(
            Options o, SoakTarget target, TargetProbe probe, SoakTraffic traffic, long start, PrintStream out)
            throws IOException {
        boolean gcEachMinute = o.gcEachMinute() && target.embedded();
        List<TargetSample> samples = new ArrayList<>();
        int baseline = Math.min(SoakChecks.BASELINE_MINUTE, o.minutes());
        long quietMs = o.requestTimeoutS() * 1000L + 5000;
        for (int m = 1; m <= o.minutes(); m++) {
            // The minutes leave out the quiet gaps of earlier readings: the arrivals' clock stood still.
            sleepUntil(start + TimeUnit.SECONDS.toNanos((long) o.secondsPerMinute() * m) + traffic.pausedNanos());
            boolean fullGc = target.embedded() && (gcEachMinute || m == baseline);
            TargetSample sample = probe.sample(fullGc, traffic, quietMs);
            samples.add(sample);
            int minute = m - 1;
            List<SoakOutcome> ended = traffic.outcomes().stream()
                    .filter(x -> x.minute() == minute)
                    .toList();
            int running = traffic.startedIn(minute) - ended.size();
            out.println(SoakConsole.minute(o.minutes(), SoakMinute.of(m, ended), running, sample));
        }
        return samples;
    }

    /** What the warm-up's requests did, without the target's readings (it has none of its own). */
    private static JsonObject warmupRow(List<SoakOutcome> all, int seconds) {
        JsonObject warmup = SoakReport.row(
                SoakMinute.of(
                        0,
                        all.stream()
                                .filter(x -> x.minute() == SoakTraffic.WARM_UP)
                                .toList()),
                TargetSample.UNKNOWN);
        TargetSample.FIELDS.keySet().forEach(warmup::remove);
        warmup.remove("minute");
        return warmup.put("seconds", seconds);
    }

    static JsonObject summary(
            Options o,
            JsonObject target,
            List<SoakOutcome> outcomes,
            List<TargetSample> samples,
            TargetSample end,
            int socketsOpened) {
        List<SoakMinute> minutes = SoakMinute.of(outcomes, o.minutes());
        JsonArray rows = new JsonArray();
        for (int i = 0; i < minutes.size(); i++) {
            rows.add(SoakReport.row(minutes.get(i), i < samples.size() ? samples.get(i) : TargetSample.UNKNOWN));
        }
        return new JsonObject()
                .put("options", options(o))
                .put("target", target)
                .put("totals", totals(outcomes, socketsOpened))
                .put("minutes", rows)
                .put("end", SoakReport.target(new JsonObject(), end))
                .put("gcPauses", null)
                .put("checks", SoakReport.checks(SoakChecks.of(minutes, samples, end)));
    }

    static JsonObject options(Options o) {
        return new JsonObject()
                .put("minutes", o.minutes())
                .put("rate", o.rate())
                .put("target", o.target() == null ? null : o.target().toString())
                .put("maxInFlight", o.maxInFlight())
                .put("requestTimeoutS", o.requestTimeoutS())
                .put("seed", o.seed())
                .put("webSockets", o.webSockets())
                .put("gcEachMinute", o.gcEachMinute() && o.target() == null)
                .put("model", o.model().isEmpty() ? null : o.model())
                .put("secondsPerMinute", o.secondsPerMinute())
                .put("warmupSeconds", o.warmupSeconds());
    }

    /** The totals row, what was sent by kind, and a few messages of each kind of error, for a first look. */
    static JsonObject totals(List<SoakOutcome> outcomes, int socketsOpened) {
        JsonObject totals = SoakReport.row(SoakMinute.of(0, outcomes), TargetSample.UNKNOWN);
        TargetSample.FIELDS.keySet().forEach(totals::remove);
        totals.remove("minute");
        Map<String, Integer> sent = new LinkedHashMap<>();
        for (SoakKind k : SoakKind.values()) {
            sent.put(k.key(), 0);
        }
        Map<String, Set<String>> samples = new LinkedHashMap<>();
        int cancelsPlanned = 0;
        for (SoakOutcome x : outcomes) {
            sent.merge(x.kind().key(), 1, Integer::sum);
            cancelsPlanned += x.cancelPlanned() ? 1 : 0;
            if (x.error() != null) {
                Set<String> seen = samples.computeIfAbsent(x.error().key(), k -> new LinkedHashSet<>());
                if (seen.size() < 3) {
                    seen.add(x.result().detail());
                }
            }
        }
        JsonObject errorSamples = new JsonObject();
        samples.forEach((k, v) -> errorSamples.put(k, new JsonArray(new ArrayList<>(v))));
        return totals.put("sentByKind", new JsonObject(new LinkedHashMap<>(sent)))
                .put("cancelsPlanned", cancelsPlanned)
                .put("webSocketsOpened", socketsOpened)
                .put("errorSamples", errorSamples);
    }

    /** Waits for every request sent to end (each has its timeout); says how many did not. */
    private static void awaitDrained(SoakTraffic traffic, long seconds, PrintStream out) {
        try {
            traffic.drained().get(seconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            out.println("soak: " + traffic.open() + " requests still open " + seconds + " s after the last arrival");
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Runs {@code action} on the traffic's context: its sockets and their handlers belong there. */
    private static <T> Future<T> onContext(Context context, Supplier<Future<T>> action) {
        Promise<T> done = Promise.promise();
        context.runOnContext(v -> action.get().onComplete(done));
        return done.future();
    }

    private static void sleepUntil(long nanos) {
        long left;
        while ((left = nanos - System.nanoTime()) > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
