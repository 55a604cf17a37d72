package dev.tandem.bench;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Writes a route benchmark's results: {@code summary.json} (the shape other tools read — keep it),
 * {@code results.csv} (one row per request and policy), {@code report.html} with the charts, which are
 * also written alone as {@code hit_rate.svg} and {@code ttft.svg}; and prints the table.
 */
final class BenchReport {
    private BenchReport() {}

    /** The summary exactly as issue 13 specifies it; a figure with no sample (every request failed) is null. */
    static JsonObject summary(String trace, int requests, double idealHitRate, List<PolicyResult> results) {
        JsonObject policies = new JsonObject();
        for (PolicyResult p : results) {
            JsonObject figures = new JsonObject();
            policies.put(
                    p.policy(),
                    figures.put("hit_rate", number(p.hitRate()))
                            .put("ttft_p50_ms", number(p.ttftP50Ms()))
                            .put("ttft_p99_ms", number(p.ttftP99Ms()))
                            .put("itl_p50_ms", number(p.itlP50Ms()))
                            .put("itl_p99_ms", number(p.itlP99Ms()))
                            .put("throughput_tokens_per_s", number(p.throughputTokensPerS()))
                            .put("kv_bytes_moved", p.kvBytesMoved())
                            .put("local_prefills", p.localPrefills())
                            .put("errors", p.errors()));
            if (p.tenants() != null) {
                JsonObject tenants = new JsonObject();
                p.tenants()
                        .forEach((name, t) -> tenants.put(
                                name,
                                new JsonObject()
                                        .put("ttft_p50_ms", number(t.ttftP50Ms()))
                                        .put("ttft_p99_ms", number(t.ttftP99Ms()))
                                        .put("admitted", t.admitted())
                                        .put("rejected", t.rejected())
                                        .put("tokens", t.tokens())));
                figures.put("tenants", tenants);
            }
        }
        return new JsonObject()
                .put("trace", trace)
                .put("requests", requests)
                .put("ideal_hit_rate", number(idealHitRate))
                .put("policies", policies);
    }

    private static Double number(double v) {
        return Double.isFinite(v) ? v : null;
    }

    static void write(Path dir, JsonObject summary, List<PolicyResult> results, double timeScale) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("summary.json"), summary.encodePrettily() + "\n");
        writeCsv(dir.resolve("results.csv"), results, timeScale);
        String hit = RouteCharts.hitRateBars(results, summary.getDouble("ideal_hit_rate", 0.0));
        String ttft = RouteCharts.ttftCdf(results, timeScale);
        Files.writeString(dir.resolve("hit_rate.svg"), hit);
        Files.writeString(dir.resolve("ttft.svg"), ttft);
        Files.writeString(dir.resolve("report.html"), html(summary, results, hit, ttft));
    }

    private static void writeCsv(Path file, List<PolicyResult> results, double timeScale) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write("policy,index,arrival_ms,prompt_tokens,cached_tokens,completion_tokens,ttft_ms,itl_mean_ms,"
                    + "e2e_ms,prefill_worker,decode_worker,error,tenant\n");
            for (PolicyResult p : results) {
                for (RequestResult r : p.requests()) {
                    double itlMean = 0;
                    for (double g : r.itlMs()) {
                        itlMean += g;
                    }
                    itlMean = r.itlMs().length == 0 ? Double.NaN : itlMean / r.itlMs().length;
                    w.write(String.join(
                                    ",",
                                    p.policy(),
                                    Integer.toString(r.index()),
                                    Long.toString(r.arrivalMs()),
                                    Integer.toString(r.promptTokens()),
                                    Integer.toString(r.cachedTokens()),
                                    Integer.toString(r.completionTokens()),
                                    fixed(r.ttftMs() * timeScale),
                                    fixed(itlMean * timeScale),
                                    fixed(r.e2eMs() * timeScale),
                                    r.prefillWorker() == null ? "" : r.prefillWorker(),
                                    r.decodeWorker() == null ? "" : r.decodeWorker(),
                                    r.error() == null ? "" : csv(r.error()),
                                    r.tenant() == null ? "" : r.tenant())
                            + "\n");
                }
            }
        }
    }

    private static String fixed(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.3f", v) : "";
    }

    private static String csv(String s) {
        return "\"" + s.replace("\"", "\"\"").replace('\n', ' ') + "\"";
    }

    /** The end-of-run table, one row per policy. */
    static String table(JsonObject summary) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "%s: %d requests, ideal hit rate %.3f (times in the trace's time)%n",
                summary.getString("trace"),
                summary.getInteger("requests"),
                summary.getDouble("ideal_hit_rate", Double.NaN)));
        sb.append(String.format(
                Locale.ROOT,
                "%-14s %8s %9s %9s %8s %8s %10s %12s %7s %6s%n",
                "policy",
                "hit rate",
                "TTFT p50",
                "TTFT p99",
                "ITL p50",
                "ITL p99",
                "tokens/s",
                "KV moved GB",
                "local",
                "errors"));
        JsonObject policies = summary.getJsonObject("policies");
        for (String name : policies.fieldNames()) {
            JsonObject p = policies.getJsonObject(name);
            sb.append(String.format(
                    Locale.ROOT,
                    "%-14s %8.3f %9.1f %9.1f %8.2f %8.2f %10.0f %12.1f %7d %6d%n",
                    name,
                    orNaN(p, "hit_rate"),
                    orNaN(p, "ttft_p50_ms"),
                    orNaN(p, "ttft_p99_ms"),
                    orNaN(p, "itl_p50_ms"),
                    orNaN(p, "itl_p99_ms"),
                    orNaN(p, "throughput_tokens_per_s"),
                    p.getLong("kv_bytes_moved") / 1e9,
                    p.getLong("local_prefills"),
                    p.getInteger("errors")));
        }
        return sb.toString();
    }

    private static double orNaN(JsonObject o, String key) {
        Double d = o.getDouble(key);
        return d == null ? Double.NaN : d;
    }

    private static String html(JsonObject summary, List<PolicyResult> results, String hit, String ttft) {
        return "<!doctype html><html><head><meta charset=\"utf-8\"><title>tandem bench route</title>"
                + "<style>body{font-family:sans-serif;margin:2em}pre{background:#f4f4f4;padding:1em}</style></head>"
                + "<body><h1>tandem bench route</h1><pre>" + escape(table(summary)) + "</pre>"
                + "<h2>Prompt tokens served from cache</h2>" + hit
                + "<h2>Time to first token</h2>" + ttft
                + "</body></html>\n";
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
