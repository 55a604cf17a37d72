package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** summary.json and minutes.csv have exactly the documented shapes; a missing figure is null or empty. */
class SoakReportTest {
    static final List<String> ROW_KEYS = List.of(
            "minute",
            "requests",
            "completed",
            "cancelled",
            "errors",
            "errorsByKind",
            "ttftP50Ms",
            "ttftP99Ms",
            "e2eP50Ms",
            "e2eP99Ms",
            "kvCacheBytes",
            "kvUsedBytes",
            "routerInFlight",
            "heapUsedBytes",
            "heapAfterLastGcBytes",
            "heapAfterGcBytes",
            "rssBytes",
            "threads",
            "openFiles",
            "procRssBytes",
            "procThreads",
            "procFds");
    static final String CSV_HEADER = "minute,requests,completed,cancelled,errors,errors_http_4xx,errors_http_429,"
            + "errors_http_5xx,errors_stream,errors_transport,errors_timeout,errors_in_flight_cap,ttft_p50_ms,"
            + "ttft_p99_ms,e2e_p50_ms,e2e_p99_ms,kv_cache_bytes,kv_used_bytes,router_in_flight,heap_used_bytes,"
            + "heap_after_last_gc_bytes,heap_after_gc_bytes,rss_bytes,threads,open_files,proc_rss_bytes,proc_threads,proc_fds";
    static final Set<String> SUMMARY_KEYS =
            Set.of("options", "target", "totals", "minutes", "end", "gcPauses", "checks");

    private static final TargetSample SAMPLE =
            new TargetSample(8192, 0, 1, 1.5e8, 3.9e7, 3.7e7, 4.7e8, 73, 58, 4.4e8, 87, Double.NaN);

    private static List<SoakOutcome> outcomes() {
        List<SoakOutcome> o = new ArrayList<>();
        o.add(new SoakOutcome(0, 0, SoakKind.SSE_COMPLETION, false, SoakResult.completed(12.3456, 100, null)));
        o.add(new SoakOutcome(1, 0, SoakKind.WS_CHAT, true, SoakResult.cancelled(8)));
        o.add(new SoakOutcome(2, 1, SoakKind.JSON_CHAT, false, SoakResult.failed(SoakError.HTTP_429, "HTTP 429 busy")));
        return o;
    }

    @Test
    void aRowHasTheClientsFiguresThenTheTargets() {
        JsonObject row = SoakReport.row(SoakMinute.of(1, outcomes()), SAMPLE);
        assertEquals(ROW_KEYS, new ArrayList<>(row.fieldNames()));
        assertEquals(12.346, row.getDouble("ttftP99Ms"), "ms to three decimals");
        assertEquals(37_000_000L, row.getLong("heapAfterGcBytes"), "bytes as integers");
        assertNull(row.getValue("procFds"), "NaN is null, never a number");
        assertEquals(1, row.getJsonObject("errorsByKind").getInteger("http_429"));
    }

    @Test
    void theCsvHasAColumnPerFieldAndErrorKindAndARowPerMinute() {
        JsonArray rows = new JsonArray()
                .add(SoakReport.row(SoakMinute.of(1, outcomes().subList(0, 2)), SAMPLE))
                .add(SoakReport.row(SoakMinute.of(2, outcomes().subList(2, 3)), TargetSample.UNKNOWN));
        List<String> lines = SoakReport.csv(rows).lines().toList();
        assertEquals(CSV_HEADER, lines.get(0));
        assertEquals(3, lines.size());
        assertTrue(lines.get(1).startsWith("1,2,1,1,0,0,0,0,0,0,0,0,8,12.346,100,100,8192,0,1,"), lines.get(1));
        assertTrue(lines.get(2).startsWith("2,1,0,0,1,0,1,0,0,0,0,0,,,,,"), lines.get(2));
        assertTrue(lines.get(2).endsWith(",,,,"), "unknown target figures are empty cells");
    }

    @Test
    void theSummaryHasItsSectionsAndTheTotalsSayWhatWasSent() {
        SoakBench.Options o = new SoakBench.Options(2, 5, null, Path.of("out"), 512, 60, 42, 2, true, "", "", 60, 0);
        JsonObject summary = SoakBench.summary(
                o, new JsonObject().put("kind", "embedded"), outcomes(), List.of(SAMPLE, SAMPLE), SAMPLE, 2);
        assertEquals(SUMMARY_KEYS, summary.fieldNames());
        assertEquals(2, summary.getJsonArray("minutes").size());
        JsonObject totals = summary.getJsonObject("totals");
        assertEquals(
                Set.of(
                        "requests",
                        "completed",
                        "cancelled",
                        "errors",
                        "errorsByKind",
                        "ttftP50Ms",
                        "ttftP99Ms",
                        "e2eP50Ms",
                        "e2eP99Ms",
                        "sentByKind",
                        "cancelsPlanned",
                        "webSocketsOpened",
                        "errorSamples"),
                totals.fieldNames());
        assertEquals(3, totals.getInteger("requests"));
        assertEquals(1, totals.getJsonObject("sentByKind").getInteger("ws_chat"));
        assertEquals(0, totals.getJsonObject("sentByKind").getInteger("sse_chat"));
        assertEquals(1, totals.getInteger("cancelsPlanned"));
        assertEquals(
                new JsonArray().add("HTTP 429 busy"),
                totals.getJsonObject("errorSamples").getJsonArray("http_429"));
        assertEquals(
                Set.of(
                        "baselineMinute",
                        "heapAfterGcEndOverMinute10",
                        "rssEndOverMinute10",
                        "maxMinuteTtftP99OverMedian",
                        "errorsTotal"),
                summary.getJsonObject("checks").fieldNames());
        assertEquals(1, summary.getJsonObject("checks").getInteger("errorsTotal"));
        assertEquals(
                Set.copyOf(ROW_KEYS.subList(10, ROW_KEYS.size())),
                summary.getJsonObject("end").fieldNames());
        assertTrue(summary.getJsonObject("options").getBoolean("gcEachMinute"));
    }

    @Test
    void gcPausesHaveTheirFieldsOrAreNull() {
        assertNull(SoakReport.gcPauses(null));
        JsonObject p = SoakReport.gcPauses(new GcPauses(3, 10.5, 2, 5, 5, 1, 2, 300, 17, 4000));
        assertEquals(
                Set.of(
                        "count",
                        "totalMs",
                        "p50Ms",
                        "p99Ms",
                        "maxMs",
                        "fullCount",
                        "explicitCount",
                        "explicitTotalMs",
                        "startupCount",
                        "startupTotalMs"),
                p.fieldNames());
        assertEquals(10.5, p.getDouble("totalMs"));
    }

    @Test
    void theChartHasBothPanels() {
        JsonArray rows = new JsonArray().add(SoakReport.row(SoakMinute.of(1, outcomes()), SAMPLE));
        String svg = SoakChart.svg(rows);
        assertTrue(svg.startsWith("<svg") && svg.contains("TTFT, ms") && svg.contains("target memory, MB"), svg);
        assertTrue(svg.contains("heap after GC"), svg);
    }

    @Test
    void numbersAndNames() {
        assertNull(SoakReport.number(Double.NaN));
        assertEquals(3L, SoakReport.number(3.0));
        assertEquals(1.235, SoakReport.number(1.23456));
        assertEquals("heap_after_gc_bytes", SoakReport.snake("heapAfterGcBytes"));
        assertEquals("ttft_p50_ms", SoakReport.snake("ttftP50Ms"));
        assertEquals("e2e_p99_ms", SoakReport.snake("e2eP99Ms"));
    }
}
