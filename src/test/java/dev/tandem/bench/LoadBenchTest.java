package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/**
 * {@code tandem bench load}: summary.json has exactly the documented shape (other tools read it), a small
 * real run against the no-work upstream fills it, and bad options are refused before anything starts.
 * No timing is asserted.
 */
class LoadBenchTest {
    private static final Set<String> TARGET_KEYS = Set.of(
            "ttft_p50_ms",
            "ttft_p99_ms",
            "itl_p50_ms",
            "itl_p99_ms",
            "e2e_p50_ms",
            "tokens_per_s",
            "requests_per_s",
            "errors");

    @TempDir
    Path dir;

    private LoadBench.Options options(List<String> targets, Path out) {
        return paced(targets, out, 0);
    }

    private LoadBench.Options paced(List<String> targets, Path out, int itlMs) {
        return new LoadBench.Options(4, 24, 16, 0, itlMs, "embedded", 1, 1, targets, 60, 8, out);
    }

    @Test
    void theSummaryHasExactlyTheDocumentedShape() {
        Map<String, LoadTargetResult> results = new LinkedHashMap<>();
        results.put("direct", new LoadTargetResult("direct", 1.0, 2.0, 0.1, 0.2, 10, 1000, 10, 0));
        results.put("tandem", new LoadTargetResult("tandem", 1.5, 4.5, 0.1, 0.3, 12, 900, 9, 1));
        JsonObject s = LoadBench.summary(options(List.of("direct", "tandem"), dir), results);
        assertEquals(
                Set.of("concurrency", "requests", "max_tokens", "targets", "added_ttft_p50_ms", "added_ttft_p99_ms"),
                s.fieldNames());
        assertEquals(4, s.getInteger("concurrency"));
        assertEquals(24, s.getInteger("requests"));
        assertEquals(16, s.getInteger("max_tokens"));
        assertEquals(
                TARGET_KEYS, s.getJsonObject("targets").getJsonObject("tandem").fieldNames());
        assertEquals(1, s.getJsonObject("targets").getJsonObject("tandem").getInteger("errors"));
        assertEquals(
                Set.of("nginx", "tandem", "tandem-tls", "tandem-traced"),
                s.getJsonObject("added_ttft_p50_ms").fieldNames());
        assertEquals(0.5, s.getJsonObject("added_ttft_p50_ms").getDouble("tandem"));
        assertEquals(2.5, s.getJsonObject("added_ttft_p99_ms").getDouble("tandem"));
        assertNull(s.getJsonObject("added_ttft_p50_ms").getValue("nginx"), "nginx did not run: null, not a number");
    }

    @Test
    void aSmallRunAgainstTheFloorFillsEveryFile() throws Exception {
        Path out = dir.resolve("run");
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        JsonObject summary =
                LoadBench.run(options(List.of("direct"), out), new PrintStream(console, true, StandardCharsets.UTF_8));
        JsonObject direct = summary.getJsonObject("targets").getJsonObject("direct");
        assertEquals(TARGET_KEYS, direct.fieldNames());
        assertEquals(0, direct.getInteger("errors"), console.toString(StandardCharsets.UTF_8));
        assertTrue(direct.getDouble("tokens_per_s") > 0, direct.encode());
        assertEquals(summary, new JsonObject(Files.readString(out.resolve("summary.json"))));
        List<String> csv = Files.readAllLines(out.resolve("results.csv"));
        assertEquals(LoadTargetResult.CSV_HEADER, csv.get(0));
        assertTrue(csv.get(1).startsWith("direct,"), csv.toString());
        assertTrue(Files.readString(out.resolve("ttft.svg")).contains("<svg"));
    }

    /**
     * {@code --itl-ms} paces the floor and Tandem's zero-cost workers alike, so TTFT compares hops at a
     * model's pace rather than queues of a saturated CPU. Timers never fire early: the gap between tokens
     * is at least about the pace (a lower bound, not a speed), and no gap at all without it.
     */
    @Test
    void bothTargetsStreamAtTheGivenPace() throws Exception {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        JsonObject summary = LoadBench.run(
                paced(List.of("direct", "tandem"), dir.resolve("paced"), 10),
                new PrintStream(console, true, StandardCharsets.UTF_8));
        for (String target : List.of("direct", "tandem")) {
            JsonObject t = summary.getJsonObject("targets").getJsonObject(target);
            assertEquals(0, t.getInteger("errors"), target + ": " + console);
            assertTrue(t.getDouble("itl_p50_ms") >= 5, target + " streams faster than its pace: " + t.encode());
        }
        assertTrue(console.toString(StandardCharsets.UTF_8).contains("a token every 10 ms"), console::toString);
        // Tandem's own stage metrics are kept with the run, warm-up included (8 + 24 + 24 requests).
        String metrics = Files.readString(dir.resolve("paced").resolve("tandem-metrics.prom"));
        assertTrue(metrics.contains("tandem_request_ttft_seconds_count 56"), metrics);
    }

    /**
     * {@code tandem-tls}: the same Tandem with HTTPS on its API, the client trusting the test CA and checking
     * the certificate names 127.0.0.1; its metrics are kept under its own name.
     */
    @Test
    void tandemOverTlsStreamsLikeTheClearTextOne() throws Exception {
        Path out = dir.resolve("tls");
        LoadBench.Options o =
                new LoadBench.Options(4, 16, 8, 0, 0, "embedded", 1, 1, List.of("tandem-tls"), 60, 8, out, testTls());
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        JsonObject summary = LoadBench.run(o, new PrintStream(console, true, StandardCharsets.UTF_8));
        JsonObject tls = summary.getJsonObject("targets").getJsonObject("tandem-tls");
        assertEquals(0, tls.getInteger("errors"), console.toString(StandardCharsets.UTF_8));
        assertTrue(tls.getDouble("tokens_per_s") > 0, tls.encode());
        assertTrue(console.toString(StandardCharsets.UTF_8).contains("  tandem-tls "), console::toString);
        assertTrue(Files.readString(out.resolve("results.csv")).contains("\ntandem-tls,"));
        assertTrue(Files.readString(out.resolve("tandem-tls-metrics.prom")).contains("tandem_request_ttft_seconds"));
    }

    /** {@code tandem-traced}: the same Tandem tracing every request into the bench's OTLP sink. */
    @Test
    void tandemTracedExportsItsSpans() throws Exception {
        Path out = dir.resolve("traced");
        LoadBench.Options o = new LoadBench.Options(
                4, 16, 8, 0, 0, "embedded", 1, 1, List.of("tandem-traced"), 60, 8, out, null, 1.0);
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        JsonObject summary = LoadBench.run(o, new PrintStream(console, true, StandardCharsets.UTF_8));
        String text = console.toString(StandardCharsets.UTF_8);
        assertEquals(
                0,
                summary.getJsonObject("targets").getJsonObject("tandem-traced").getInteger("errors"),
                text);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("tandem-traced exported (\\d+) OTLP requests")
                .matcher(text);
        assertTrue(m.find(), text);
        assertTrue(Integer.parseInt(m.group(1)) > 0, text);
    }

    private static LoadBench.Tls testTls() {
        Path tls = Path.of("src/test/resources/tls");
        return new LoadBench.Tls(tls.resolve("server.pem"), tls.resolve("server-key.pem"), tls.resolve("ca.pem"));
    }

    /** Poisson arrivals can hold far more streams than the mean: none may queue in the client for a connection. */
    @Test
    void theClientHasAConnectionForEveryStream() {
        assertEquals(
                4 + 8, LoadBench.poolSize(options(List.of("direct"), dir)), "a closed loop: its streams and a few");
        LoadBench.Options poisson =
                new LoadBench.Options(64, 1000, 128, 25, 20, "embedded", 1, 1, List.of("direct"), 60, 0, dir);
        assertTrue(LoadBench.poolSize(poisson) >= 1024, "Poisson arrivals get a pool far above the mean");
    }

    static Stream<List<String>> badRuns() {
        return Stream.of(
                List.of("--concurrency", "0"),
                List.of("--requests", "0"),
                List.of("--max-tokens", "0"),
                List.of("--rate", "-1"),
                List.of("--itl-ms", "-5"),
                List.of("--warmup", "-1"),
                List.of("--topology", "cloud"),
                List.of("--targets", "direct,vllm"),
                List.of("--targets", "direct,direct"),
                List.of("--prefill", "0"),
                List.of("--targets", "tandem,tandem-tls"),
                List.of("--targets", "tandem-tls", "--tls-cert", "src/test/resources/tls/server.pem"),
                List.of(
                        "--targets",
                        "tandem-tls",
                        "--tls-cert",
                        "src/test/resources/tls/server.pem",
                        "--tls-key",
                        "src/test/resources/tls/server-key.pem",
                        "--tls-ca",
                        "src/test/resources/tls/no-such-ca.pem"),
                List.of("--targets", "tandem", "--tls-ca", "src/test/resources/tls/ca.pem"));
    }

    @ParameterizedTest
    @MethodSource("badRuns")
    void refusesWithOneClearLine(List<String> args) {
        StringWriter err = new StringWriter();
        String[] all =
                Stream.concat(args.stream(), Stream.of("--out", dir.toString())).toArray(String[]::new);
        int code = new CommandLine(new LoadBenchCommand())
                .setErr(new PrintWriter(err, true))
                .execute(all);
        assertEquals(2, code, err.toString());
        assertTrue(err.toString().startsWith("tandem bench load: "), err.toString());
    }

    @Test
    void tandemTlsWithoutItsFilesSaysWhatItNeeds() {
        StringWriter err = new StringWriter();
        int code = new CommandLine(new LoadBenchCommand())
                .setErr(new PrintWriter(err, true))
                .execute("--targets", "direct,tandem-tls", "--out", dir.toString());
        assertEquals(2, code, err.toString());
        assertEquals(
                "tandem bench load: the tandem-tls target needs --tls-cert, --tls-key and --tls-ca (PEM files)",
                err.toString().trim());
    }
}
