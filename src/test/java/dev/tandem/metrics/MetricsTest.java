package dev.tandem.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A scrape of {@code /metrics} after known traffic finds every documented metric with the values that
 * traffic implies: token counters equal to the tokens served, one TTFT per request, affinity hits.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MetricsTest {
    private static final int REQUESTS = 6;
    private TandemNode node;
    private String scrape;
    private HttpTestClient http;
    private int promptTokens;
    private int completionTokens;

    @BeforeAll
    void serveAndScrape() {
        node = TestNodes.startEmbedded(TestNodes.config(), 2, 2);
        http = new HttpTestClient(node.router().httpPort());
        for (int i = 0; i < REQUESTS; i++) {
            // Requests 0-2 start sessions, 3-5 repeat them: three affinity misses, then three hits.
            JsonObject body = new JsonObject()
                    .put("prompt", "Count me " + i)
                    .put("max_tokens", 5 + i)
                    .put("temperature", 0)
                    .put("user", "zq-user-" + (i % 3));
            HttpResponse<String> r = http.post("/v1/completions", body.encode());
            assertEquals(200, r.statusCode(), r.body());
            JsonObject usage = new JsonObject(r.body()).getJsonObject("usage");
            promptTokens += usage.getInteger("prompt_tokens");
            completionTokens += usage.getInteger("completion_tokens");
        }
        assertEquals(400, http.post("/v1/completions", "{\"prompt\": 5}").statusCode());
        HttpResponse<String> metrics = http.send(http.request("/metrics").GET().build());
        assertEquals(200, metrics.statusCode());
        assertTrue(metrics.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
        scrape = metrics.body();
    }

    @AfterAll
    void stop() {
        node.close().await();
    }

    /** Sample value by its exact series text (name plus labels as Prometheus prints them). */
    private double value(String series) {
        Map<String, Double> samples = new HashMap<>();
        for (String line : scrape.split("\n")) {
            if (!line.startsWith("#") && !line.isBlank()) {
                int space = line.lastIndexOf(' ');
                samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
            }
        }
        Double v = samples.get(series);
        if (v == null) {
            throw new AssertionError("no series " + series + " in the scrape");
        }
        return v;
    }

    @Test
    void requestCountersMatchTheTraffic() {
        assertEquals(REQUESTS, value("tandem_requests_total{outcome=\"ok\"}"));
        assertEquals(0, value("tandem_requests_total{outcome=\"timeout\"}"));
        assertEquals(promptTokens, value("tandem_prompt_tokens_total"));
        assertEquals(completionTokens, value("tandem_generated_tokens_total"));
        assertEquals(3, value("tandem_affinity_total{result=\"miss\"}"));
        assertEquals(3, value("tandem_affinity_total{result=\"hit\"}"));
        assertEquals(0, value("tandem_router_in_flight"));
    }

    @Test
    void latencyHistogramsHaveOneObservationPerRequest() {
        assertEquals(REQUESTS, value("tandem_request_ttft_seconds_count"));
        assertTrue(value("tandem_request_ttft_seconds_sum") > 0, "TTFT > 0");
        assertEquals(REQUESTS, value("tandem_request_e2e_seconds_count"));
        assertEquals(REQUESTS, value("tandem_request_queue_seconds_count"));
        // Every token after the first is one inter-token gap.
        assertEquals(completionTokens - REQUESTS, value("tandem_request_itl_seconds_count"));
        assertEquals(REQUESTS, value("tandem_request_ttft_seconds_bucket{le=\"+Inf\"}"));
        assertTrue(scrape.contains("tandem_request_ttft_seconds_bucket{le=\"0.1\"}"), "SLO buckets are published");
    }

    @Test
    void workerAndTransferMetricsAreRecorded() {
        double prefills = value("tandem_prefill_compute_seconds_count{worker=\"prefill-1\"}")
                + value("tandem_prefill_compute_seconds_count{worker=\"prefill-2\"}");
        assertEquals(REQUESTS, prefills);
        double kvBytes = value("tandem_kv_transfer_bytes_sum{worker=\"prefill-1\"}")
                + value("tandem_kv_transfer_bytes_sum{worker=\"prefill-2\"}");
        assertTrue(kvBytes > 0, "KV bytes shipped");
        assertTrue(
                value("tandem_decode_step_seconds_count{worker=\"decode-1\"}")
                                + value("tandem_decode_step_seconds_count{worker=\"decode-2\"}")
                        > 0,
                "decode steps");
        // From the registry heartbeat: present for every worker (the value may lag by a heartbeat).
        assertTrue(value("tandem_worker_active_sequences{role=\"decode\",worker=\"decode-1\"}") >= 0);
        assertTrue(value("tandem_worker_kv_capacity_bytes{role=\"decode\",worker=\"decode-2\"}") > 0);
        // Idle once the heartbeat after the last prompt arrived (a loaded machine may scrape before it).
        dev.tandem.TestNodes.awaitTrue(
                () -> {
                    scrape = http.send(http.request("/metrics").GET().build()).body();
                    return value("tandem_worker_queued_prefill_tokens{role=\"prefill\",worker=\"prefill-1\"}") == 0;
                },
                "prefill-1's heartbeat to report an empty queue");
    }

    @Test
    void schedulingIsTimedPerPluginAndCountedPerDecision() {
        // The default policy's plugins, each once per decision.
        for (String plugin : List.of("not-draining", "predicted-ttft")) {
            assertEquals(
                    REQUESTS,
                    value("tandem_scheduling_plugin_seconds_count{plugin=\"" + plugin + "\",profile=\"prefill\"}"),
                    plugin);
        }
        for (String plugin : List.of("session-affinity", "prefix-overlap", "active-sequences", "kv-utilization")) {
            assertEquals(
                    REQUESTS,
                    value("tandem_scheduling_plugin_seconds_count{plugin=\"" + plugin + "\",profile=\"decode\"}"),
                    plugin);
        }
        double decisions = value("tandem_scheduling_decisions_total{profile=\"prefill\",worker=\"prefill-1\"}")
                + value("tandem_scheduling_decisions_total{profile=\"prefill\",worker=\"prefill-2\"}");
        assertEquals(REQUESTS, decisions);
    }

    @Test
    void scalingSignalsArePerModelAndRole() {
        List<String> series = scrape.lines()
                .filter(l -> l.startsWith("tandem_scaling_"))
                .map(l -> l.substring(0, l.lastIndexOf(' ')))
                .sorted()
                .toList();
        assertEquals(3, series.size(), "one model: prefill, decode and the ratio: " + series);
        assertTrue(series.get(0).matches("tandem_scaling_pd_ratio\\{model=\"[^\"]+\"}"), series.get(0));
        assertTrue(series.get(1).matches("tandem_scaling_recommended_workers\\{model=\"[^\"]+\",role=\"decode\"}"));
        assertTrue(series.get(2).matches("tandem_scaling_recommended_workers\\{model=\"[^\"]+\",role=\"prefill\"}"));
        // Six small requests, done: no sequence left, so the floor of one decode worker (scaling.min-workers);
        // prefill depends on how fast the built-in model prefilled them, a whole number of workers all the same.
        double ratio = value(series.get(0));
        double decode = value(series.get(1));
        double prefill = value(series.get(2));
        assertEquals(1, decode);
        assertTrue(prefill >= 1 && prefill == Math.rint(prefill), "prefill " + prefill);
        assertEquals(prefill / decode, ratio, 1e-9);
    }

    @Test
    void jvmAndVertxMetricsAreThereAndNoLabelCarriesARequest() {
        assertTrue(scrape.contains("jvm_memory_used_bytes{area=\"heap\""), "JVM memory metrics");
        assertTrue(scrape.contains("jvm_gc_"), "JVM GC metrics");
        // What a soak watches for leaks outside the heap (bench soak reads these from a target it did not start).
        assertTrue(value("process_resident_memory_bytes") > 10e6, "RSS from /proc/self/status");
        assertTrue(value("process_files_open_files") > 0, "open file descriptors");
        assertTrue(value("jvm_threads_live_threads") > 0, "live threads");
        assertTrue(scrape.contains("vertx_http_server_requests_total"), "Vert.x HTTP server metrics");
        assertTrue(scrape.contains("vertx_eventbus_"), "Vert.x event bus metrics");
        for (String line : scrape.split("\n")) {
            assertTrue(
                    !line.contains("zq-user-") && !line.contains("Count me"), "a label carries request data: " + line);
        }
    }
}
