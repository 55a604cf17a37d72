package dev.tandem.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.FlowControlSettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard k8s/grafana/tandem.json: well formed (unique panel ids, every query panel on the
 * ${datasource} variable with a non-blank expr, a grid position), covering what issue 34 asks for, and reading
 * only metrics a running Tandem exports: an embedded node serves completions (one waits in the router's
 * queue and one is refused, so the lazily registered flow-control meters exist) and its /metrics is scraped.
 */
class GrafanaDashboardTest {
    static final Path DASHBOARD = Path.of("k8s", "grafana", "tandem.json");

    /** Every name is checked against the scrape: none is let through unexported. */
    static final Set<String> NOT_YET_EXPORTED = Set.of();

    /** One metric per view the issue asks for: requests, errors, latency, queue, cache, KV, load, scaling. */
    static final List<String> REQUIRED = List.of(
            "tandem_requests_total",
            "vertx_http_server_requests_total",
            "tandem_request_ttft_seconds_bucket",
            "tandem_request_itl_seconds_bucket",
            "tandem_request_e2e_seconds_bucket",
            "tandem_flow_queued",
            "tandem_flow_queue_wait_seconds_bucket",
            "tandem_prompt_tokens_cached_total",
            "tandem_kv_transfer_bytes_sum",
            "tandem_worker_active_sequences",
            "tandem_scaling_recommended_workers",
            "tandem_scaling_pd_ratio");

    private static TandemNode node;
    private static Set<String> exported;

    @BeforeAll
    static void serveAndScrape() {
        node = TestNodes.startEmbedded(config(), 1, 1);
        HttpTestClient http = new HttpTestClient(node.router().httpPort());
        // The first request's prefill is paced (20 ms a token) and holds the only prefill worker, which is
        // saturated at one queued token: the second waits in the router's queue, the third finds the tenant's
        // queue full (429 queue_full).
        CompletableFuture<HttpResponse<String>> first = http.postAsync("/v1/completions", completion(0));
        TestNodes.awaitTrue(() -> scrape(http).contains("tandem_router_in_flight 1.0"), "the first request");
        CompletableFuture<HttpResponse<String>> second = http.postAsync("/v1/completions", completion(1));
        TestNodes.awaitTrue(() -> scrape(http).matches("(?s).*\ntandem_flow_queued\\{[^}]*} 1\\.0\n.*"), "a wait");
        HttpResponse<String> third = http.post("/v1/completions", completion(2));
        assertEquals(429, third.statusCode(), third.body());
        assertEquals(200, first.join().statusCode(), "first");
        assertEquals(200, second.join().statusCode(), "second");
        assertEquals(400, http.post("/v1/completions", "{\"prompt\": 5}").statusCode(), "an HTTP error");
        exported = GrafanaDashboardChecks.seriesNames(scrape(http));
    }

    @AfterAll
    static void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private static TandemConfig config() {
        TandemConfig base = TestNodes.config();
        FlowControlSettings f = base.flowControl();
        FlowControlSettings.QueueSettings q = f.queue();
        FlowControlSettings flow = new FlowControlSettings(
                f.tenantHeader(),
                f.tenantFromUser(),
                f.defaultTenant(),
                f.tenants(),
                f.defaults(),
                new FlowControlSettings.QueueSettings(1, 1, q.timeoutMs(), 1, 0, q.maxKvFraction()),
                f.fairness(),
                f.fairnessCreditTokens(),
                f.quotaFailOpen(),
                f.quotaTimeoutMs(),
                f.maxTenantLabels());
        return base.withModel(TestSettings.withPacing(base.model(), 2_000, 20_000))
                .withFlowControl(flow);
    }

    private static String completion(int i) {
        String prompt = "request " + i + " of the dashboard test asks for a few tokens after a prompt long enough"
                + " that its paced prefill takes a while on the only prefill worker";
        return new JsonObject().put("prompt", prompt).put("max_tokens", 4).encode();
    }

    private static String scrape(HttpTestClient http) {
        HttpResponse<String> r = http.send(http.request("/metrics").GET().build());
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    static JsonObject dashboard() throws IOException {
        return new JsonObject(Files.readString(DASHBOARD));
    }

    @Test
    void structureIsSound() throws IOException {
        assertEquals(List.of(), GrafanaDashboardChecks.structureProblems(dashboard()));
    }

    @Test
    void everyMetricTheDashboardReadsIsExported() throws IOException {
        JsonObject d = dashboard();
        assertTrue(
                GrafanaDashboardChecks.metricNames(d).size() > 20,
                () -> "names: " + GrafanaDashboardChecks.metricNames(d));
        assertEquals(List.of(), GrafanaDashboardChecks.unknownMetrics(d, exported, NOT_YET_EXPORTED));
    }

    @Test
    void coversWhatTheIssueAsksFor() throws IOException {
        Set<String> names = GrafanaDashboardChecks.metricNames(dashboard());
        assertEquals(
                List.of(), REQUIRED.stream().filter(n -> !names.contains(n)).toList());
    }

    @Test
    void aMadeUpMetricIsRejected() throws IOException {
        JsonObject d = dashboard();
        JsonObject target = GrafanaDashboardChecks.panels(d).stream()
                .filter(p -> p.containsKey("targets"))
                .findFirst()
                .orElseThrow()
                .getJsonArray("targets")
                .getJsonObject(0);
        target.put(
                "expr",
                "sum(rate(tandem_made_up_requests_total{outcome=\"ok\"}[$__rate_interval]))"
                        + " / sum(rate(tandem_request_ttft_second_bucket[5m]))");
        assertEquals(
                List.of("tandem_made_up_requests_total", "tandem_request_ttft_second_bucket"),
                GrafanaDashboardChecks.unknownMetrics(d, exported, NOT_YET_EXPORTED));
        target.put("expr", "sum(rate(tandem_request_ttft_seconds[5m]))");
        assertEquals(
                List.of("tandem_request_ttft_seconds (the scrape has [tandem_request_ttft_seconds_bucket, "
                        + "tandem_request_ttft_seconds_count, tandem_request_ttft_seconds_max, "
                        + "tandem_request_ttft_seconds_sum])"),
                GrafanaDashboardChecks.unknownMetrics(d, exported, NOT_YET_EXPORTED));
    }

    @Test
    void brokenStructureIsReported() throws IOException {
        JsonObject d = dashboard();
        List<JsonObject> panels = GrafanaDashboardChecks.panels(d);
        JsonObject query = panels.stream()
                .filter(p -> p.containsKey("targets"))
                .findFirst()
                .orElseThrow();
        query.put("id", panels.get(0).getValue("id"));
        query.remove("gridPos");
        query.getJsonArray("targets").getJsonObject(0).put("expr", " ");
        query.put("datasource", new JsonObject().put("type", "prometheus").put("uid", "prom-1"));
        String name = "panel " + query.getValue("id") + " '" + query.getString("title") + "'";
        assertEquals(
                List.of(
                        name + ": id missing or not unique",
                        name + ": no gridPos",
                        name + ": datasource is not the ${datasource} variable",
                        name + ": target A has no expr"),
                GrafanaDashboardChecks.structureProblems(d));
    }

    @Test
    void tokenizerKeepsOnlyMetricNames() {
        assertEquals(
                Set.of("a_seconds_bucket"),
                GrafanaDashboardChecks.metricNames("histogram_quantile(0.99, sum by (le, worker) (rate("
                        + "a_seconds_bucket{worker=~\"$worker\", x='y{z}', le!=\"sum\"}[$__rate_interval])))"));
        assertEquals(
                Set.of("a", "b_total", "c:rate5m"),
                GrafanaDashboardChecks.metricNames("max without (role) (a) / on(instance) group_left(role) "
                        + "sum(increase(b_total[1h:5m] offset 5m)) > bool 1e3 and c:rate5m unless ${x} or inf"));
    }
}
