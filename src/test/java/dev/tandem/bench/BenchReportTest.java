package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchReportTest {
    static final Set<String> POLICY_KEYS = Set.of(
            "hit_rate",
            "ttft_p50_ms",
            "ttft_p99_ms",
            "itl_p50_ms",
            "itl_p99_ms",
            "throughput_tokens_per_s",
            "kv_bytes_moved",
            "local_prefills",
            "errors");

    /** The shape other tools read: exactly these keys, floats as numbers with a point, counts as integers. */
    static void assertSummaryShape(JsonObject summary, Set<String> policies) {
        assertEquals(Set.of("trace", "requests", "ideal_hit_rate", "policies"), summary.fieldNames());
        assertInstanceOf(String.class, summary.getValue("trace"));
        assertInstanceOf(Integer.class, summary.getValue("requests"));
        assertInstanceOf(Double.class, summary.getValue("ideal_hit_rate"));
        JsonObject p = summary.getJsonObject("policies");
        assertEquals(policies, p.fieldNames());
        for (String name : policies) {
            JsonObject one = p.getJsonObject(name);
            assertEquals(POLICY_KEYS, one.fieldNames(), name);
            for (String k : List.of(
                    "hit_rate", "ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms", "itl_p99_ms", "throughput_tokens_per_s")) {
                assertInstanceOf(Double.class, one.getValue(k), name + "." + k);
            }
            for (String k : List.of("kv_bytes_moved", "local_prefills", "errors")) {
                assertTrue(one.getValue(k) instanceof Integer || one.getValue(k) instanceof Long, name + "." + k);
            }
        }
    }

    @Test
    void writesTheSummaryCsvAndChartsAndReadsBackTheSameShape(@TempDir Path dir) throws Exception {
        RequestResult a =
                new RequestResult(0, 0, 100, 64, 5, 3.0, new double[] {1, 1}, 9, "prefill-1", "decode-1", null);
        RequestResult b = RequestResult.failed(1, 50, 80, 4, "HTTP 429: \"busy\", retry");
        List<PolicyResult> results = List.of(
                PolicyResult.of("default", List.of(a, b), 2, 10, 5_000_000_000L, 1),
                PolicyResult.of("round-robin", List.of(a), 2, 10, 7, 0));
        JsonObject summary = BenchReport.summary("t.jsonl", 2, 0.5, results);
        BenchReport.write(dir, summary, results, 10);

        JsonObject read = new JsonObject(Files.readString(dir.resolve("summary.json")));
        assertSummaryShape(read, Set.of("default", "round-robin"));
        assertEquals(
                5_000_000_000L,
                read.getJsonObject("policies").getJsonObject("default").getLong("kv_bytes_moved"));
        assertEquals(
                0.64, read.getJsonObject("policies").getJsonObject("default").getDouble("hit_rate"), 1e-12);

        List<String> csv = Files.readAllLines(dir.resolve("results.csv"));
        assertEquals(1 + 3, csv.size(), "a header and one row per request and policy");
        assertTrue(csv.get(2).endsWith(",\"HTTP 429: \"\"busy\"\", retry\","), csv.get(2));
        assertTrue(Files.readString(dir.resolve("report.html")).contains("<svg"));
        assertTrue(Files.readString(dir.resolve("ttft.svg")).contains("polyline"));
        assertTrue(BenchReport.table(read).contains("round-robin"));
    }

    @Test
    void aFigureWithNoSampleIsNullNotNaN() {
        PolicyResult allFailed = PolicyResult.of("seed", List.of(RequestResult.failed(0, 0, 10, 1, "x")), 1, 1, 0, 0);
        JsonObject s = BenchReport.summary("t", 1, 0, List.of(allFailed));
        assertNull(s.getJsonObject("policies").getJsonObject("seed").getValue("ttft_p50_ms"));
        assertTrue(s.encode().contains("\"ttft_p50_ms\":null"));
    }
}
