package dev.tandem.bench;

import dev.tandem.config.TracingSettings;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemTrustOptions;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code tandem bench load}: the same streamed load against the floor ({@code direct}: SSE chunks with
 * no work), one real HTTP hop ({@code nginx} in front of it) and Tandem with zero-cost workers, over
 * clear text ({@code tandem}) or HTTPS ({@code tandem-tls}), one after the other in one run, from one client. Writes summary.json, results.csv and a chart.
 */
final class LoadBench {

    record Options(
            int concurrency,
            int requests,
            int maxTokens,
            double rate,
            int itlMs,
            String topology,
            int prefill,
            int decode,
            List<String> targets,
            long maxSeconds,
            int warmup,
            Path out,
            Tls tls,
            double traceSampleRate) {

        /** {@code tandem-traced} samples the default share of requests (tracing.sample-rate's default). */
        Options(
                int concurrency,
                int requests,
                int maxTokens,
                double rate,
                int itlMs,
                String topology,
                int prefill,
                int decode,
                List<String> targets,
                long maxSeconds,
                int warmup,
                Path out,
                Tls tls) {
            this(
                    concurrency,
                    requests,
                    maxTokens,
                    rate,
                    itlMs,
                    topology,
                    prefill,
                    decode,
                    targets,
                    maxSeconds,
                    warmup,
                    out,
                    tls,
                    TracingSettings.OFF.sampleRate());
        }

        /** Without TLS: no {@code tandem-tls} target. */
        Options(
                int concurrency,
                int requests,
                int maxTokens,
                double rate,
                int itlMs,
                String topology,
                int prefill,
                int decode,
                List<String> targets,
                long maxSeconds,
                int warmup,
                Path out) {
            this(
                    concurrency,
                    requests,
                    maxTokens,
                    rate,
                    itlMs,
                    topology,
                    prefill,
                    decode,
                    targets,
                    maxSeconds,
                    warmup,
                    out,
                    null);
        }
    }

    /**
     * The {@code tandem-tls} target's PEM files: its API's certificate chain and key, and the CA the client
     * trusts (the certificate must name 127.0.0.1: the client verifies the host it dials).
     */
    record Tls(Path cert, Path key, Path ca) {
        Tls {
            cert = cert.toAbsolutePath();
            key = key.toAbsolutePath();
            ca = ca.toAbsolutePath();
        }
    }

    /** Tokens per warm-up stream: short, so thousands of requests pass in seconds even at a model's pace. */
    static final int WARM_UP_TOKENS = 2;

    private LoadBench() {}

    static JsonObject run(Options o, PrintStream out) throws IOException {
        Files.createDirectories(o.out());
        BenchLogging.quietUnlessVerbose();
        Vertx vertx = Vertx.vertx();
        // The floor's server on event loops of its own, not the client's.
        Vertx upstream = Vertx.vertx();
        HttpClient http = vertx.createHttpClient(
                new HttpClientOptions().setKeepAlive(true).setTcpNoDelay(true).setIdleTimeout(120),
                new PoolOptions().setHttp1MaxSize(poolSize(o)));
        LoadClient client = new LoadClient(vertx, http);
        HttpClient https = o.tls() == null ? null : httpsClient(vertx, o);
        LoadClient tlsClient = https == null ? null : new LoadClient(vertx, https);
        Map<String, LoadTargetResult> results = new LinkedHashMap<>();
        DirectUpstream direct = DirectUpstream.start(upstream, o.itlMs()).await();
        out.printf(
                "load bench: %s x %d tokens, %s, %d requests per target%n",
                o.rate() > 0 ? o.rate() + " streams/s" : o.concurrency() + " streams",
                o.maxTokens(),
                o.itlMs() > 0 ? "a token every " + o.itlMs() + " ms" : "tokens as fast as each target goes",
                o.requests());
        try {
            for (String target : o.targets()) {
                switch (target) {
                    case "direct" -> results.put(target, measure(client, target, direct.port(), "direct", o, out));
                    case "nginx" -> {
                        Optional<Path> nginx = NginxProxy.find();
                        if (nginx.isEmpty()) {
                            out.println("nginx: not installed, skipped (Debian: apt-get install nginx-light)");
                            continue;
                        }
                        try (NginxProxy proxy = NginxProxy.start(
                                nginx.get(), o.out().resolve("nginx"), BenchProcesses.freePort(), direct.port())) {
                            results.put(target, measure(client, target, proxy.port(), "direct", o, out));
                        }
                    }
                    case "tandem" -> results.put(target, tandem(client, target, null, null, o, out));
                    case "tandem-traced" -> {
                        // The collector is another process in production; here a sink on the bench's own loops.
                        try (OtlpSink sink = OtlpSink.start(upstream)) {
                            results.put(
                                    target, tandem(client, target, null, sink.tracing(o.traceSampleRate()), o, out));
                            out.println("  tandem-traced exported " + sink.summary());
                        }
                    }
                    case "tandem-tls" -> {
                        if (tlsClient == null) {
                            throw new IllegalArgumentException("tandem-tls needs its certificate, key and CA");
                        }
                        results.put(target, tandem(tlsClient, target, o.tls(), null, o, out));
                    }
                    default -> throw new IllegalArgumentException("unknown target " + target);
                }
            }
        } finally {
            direct.close().await();
            http.close().await();
            if (https != null) {
                https.close().await();
            }
            vertx.close().await();
            upstream.close().await();
        }
        JsonObject summary = summary(o, results);
        Files.writeString(o.out().resolve("summary.json"), summary.encodePrettily() + "\n");
        StringBuilder csv = new StringBuilder(LoadTargetResult.CSV_HEADER).append('\n');
        results.values().forEach(r -> csv.append(r.csvRow()).append('\n'));
        Files.writeString(o.out().resolve("results.csv"), csv.toString());
        Files.writeString(o.out().resolve("ttft.svg"), LoadChart.ttft(results));
        table(results, summary, out);
        return summary;
    }

    /**
     * HTTPS for tandem-tls: the same client otherwise, HTTP/1.1 like the clear-text targets (no ALPN, so no
     * HTTP/2), trusting the given CA and checking that the certificate names 127.0.0.1.
     */
    private static HttpClient httpsClient(Vertx vertx, Options o) {
        return vertx.createHttpClient(
                new HttpClientOptions()
                        .setKeepAlive(true)
                        .setTcpNoDelay(true)
                        .setIdleTimeout(120)
                        .setProtocolVersion(HttpVersion.HTTP_1_1)
                        .setUseAlpn(false)
                        .setSsl(true)
                        .setVerifyHost(true)
                        .setTrustOptions(
                                new PemTrustOptions().addCertPath(o.tls().ca().toString())),
                new PoolOptions().setHttp1MaxSize(poolSize(o)));
    }

    /**
     * Connections enough that no request waits for one: a closed loop needs its streams; Poisson arrivals
     * at times hold several times the mean (rate × a stream's length), and a request queued in the client
     * for a connection would count as the target's TTFT.
     */
    static int poolSize(Options o) {
        return o.rate() > 0 ? 4096 : Math.max(o.concurrency(), 1) + 8;
    }

    /**
     * Tandem under the load; with {@code tls} its API speaks HTTPS only (the same Tandem otherwise), and
     * {@code client} must speak it.
     */
    private static LoadTargetResult tandem(
            LoadClient client, String name, Tls tls, JsonObject tracing, Options o, PrintStream out)
            throws IOException {
        try (TandemUnderLoad tandem = o.topology().equals("processes")
                ? TandemUnderLoad.processes(
                        o.prefill(),
                        o.decode(),
                        o.itlMs(),
                        tls,
                        tracing,
                        o.out().resolve("processes-" + name))
                : TandemUnderLoad.embedded(o.prefill(), o.decode(), o.itlMs(), tls, tracing)) {
            LoadTargetResult result = measure(client, name, tandem.port(), tandem.model(), o, out);
            // Where the time went, by stage (queue, prefill, KV, TTFT histograms): for whoever reads the run.
            Files.write(
                    o.out().resolve(name + "-metrics.prom"),
                    client.get(tandem.port(), "/metrics").await().getBytes());
            return result;
        }
    }

    private static LoadTargetResult measure(
            LoadClient client, String name, int port, String model, Options o, PrintStream out) {
        // Warm-up, not counted. First many short streams: the JIT compiles a target's per-request path
        // (HTTP, scheduling, prefill, KV hand-over) only after thousands of requests; with the 128 of a
        // single round Tandem's ran interpreted, and one request's TTFT read 3.6 ms instead of 0.8.
        if (o.warmup() > 0) {
            client.run(
                            port,
                            new LoadClient.Load(
                                    o.concurrency(), o.warmup(), WARM_UP_TOKENS, 0, o.maxSeconds() * 1000, model))
                    .await();
        }
        // Then full-length streams: connections, the token path, the target's own pools.
        int warm = Math.min(o.requests(), Math.max(2 * o.concurrency(), 32));
        client.run(port, new LoadClient.Load(o.concurrency(), warm, o.maxTokens(), 0, o.maxSeconds() * 1000, model))
                .await();
        long start = System.nanoTime();
        LoadClient.Load load = new LoadClient.Load(
                o.concurrency(), o.requests(), o.maxTokens(), o.rate(), o.maxSeconds() * 1000, model);
        List<RequestResult> results;
        try (ProgressBar bar = new ProgressBar(out, name, o.requests(), client.done::get, client.errors::get)) {
            results = client.run(port, load).await();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        return LoadTargetResult.of(name, results, seconds);
    }

    /** summary.json, exactly as documented (other tools read it). */
    static JsonObject summary(Options o, Map<String, LoadTargetResult> results) {
        JsonObject targets = new JsonObject();
        results.forEach((name, r) -> targets.put(name, r.summary()));
        JsonObject addedP50 = new JsonObject();
        JsonObject addedP99 = new JsonObject();
        LoadTargetResult direct = results.get("direct");
        for (String name : List.of("nginx", "tandem", "tandem-tls", "tandem-traced")) {
            LoadTargetResult r = results.get(name);
            addedP50.put(
                    name,
                    direct == null || r == null ? null : LoadTargetResult.number(r.ttftP50Ms() - direct.ttftP50Ms()));
            addedP99.put(
                    name,
                    direct == null || r == null ? null : LoadTargetResult.number(r.ttftP99Ms() - direct.ttftP99Ms()));
        }
        return new JsonObject()
                .put("concurrency", o.concurrency())
                .put("requests", o.requests())
                .put("max_tokens", o.maxTokens())
                .put("targets", targets)
                .put("added_ttft_p50_ms", addedP50)
                .put("added_ttft_p99_ms", addedP99);
    }

    private static void table(Map<String, LoadTargetResult> results, JsonObject summary, PrintStream out) {
        out.printf(
                "%n  %-10s %10s %10s %9s %9s %10s %12s %9s %7s%n",
                "target", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "E2E p50", "tokens/s", "req/s", "errors");
        for (LoadTargetResult r : results.values()) {
            out.printf(
                    "  %-10s %8.2fms %8.2fms %7.3fms %7.3fms %8.1fms %12.0f %9.1f %7d%n",
                    r.name(),
                    r.ttftP50Ms(),
                    r.ttftP99Ms(),
                    r.itlP50Ms(),
                    r.itlP99Ms(),
                    r.e2eP50Ms(),
                    r.tokensPerS(),
                    r.requestsPerS(),
                    r.errors());
        }
        out.println("  added TTFT over direct: p50 "
                + summary.getJsonObject("added_ttft_p50_ms").encode() + ", p99 "
                + summary.getJsonObject("added_ttft_p99_ms").encode());
    }
}
