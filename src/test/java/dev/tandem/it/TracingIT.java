package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.it.TandemCluster.Node;
import dev.tandem.tracing.OtlpReceiver;
import dev.tandem.tracing.OtlpReceiver.ReceivedSpan;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One request through a router, a prefill worker and a decode worker — three JVMs — is one trace in an
 * OTLP collector (a receiver in this JVM): every process's spans carry the client's trace id, each
 * names its process ({@code service.name}, {@code service.instance.id}), and the parents chain across
 * the processes as the request travelled. The three processes export over the three protocols: the
 * router over {@code http/protobuf} (config file), the prefill worker over {@code http/json} and the
 * decode worker over {@code grpc} (both by {@code TANDEM_TRACING_*} variables). The router writes JSON
 * logs, whose request line carries the trace id.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TracingIT extends ClusterIT {
    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    /** The span the client says the request came from (its traceparent). */
    private static final String CLIENT_SPAN_ID = "00f067aa0ba902b7";

    private final OtlpReceiver receiver = new OtlpReceiver();
    private TandemProcess router;

    @BeforeAll
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void start() {
        cluster = new TandemCluster(
                TracingIT.class,
                Map.of(
                        "router.local-prefill-max-tokens",
                        0,
                        "tracing.enabled",
                        true,
                        "tracing.protocol",
                        "http/protobuf",
                        "tracing.endpoint",
                        receiver.httpUrl(),
                        // Only requests that arrive sampled are traced: the client's traceparent decides.
                        "tracing.sample-rate",
                        0.0));
        List<TandemProcess> nodes = cluster.start(
                Node.prefill("prefill-1")
                        .withEnv(Map.of(
                                "TANDEM_TRACING_PROTOCOL", "http/json", "TANDEM_TRACING_ENDPOINT", receiver.httpUrl())),
                Node.decode("decode-1")
                        .withEnv(Map.of(
                                "TANDEM_TRACING_PROTOCOL", "grpc", "TANDEM_TRACING_ENDPOINT", receiver.grpcUrl())),
                Node.router("router-a").withEnv(Map.of("TANDEM_LOGGING_FORMAT", "json")));
        router = nodes.get(2);
        cluster.awaitWorkers(router, 1, 1);
    }

    @AfterAll
    void stopReceiver() {
        receiver.close();
    }

    @Test
    void oneRequestIsOneTraceAcrossTheThreeProcesses() throws Exception {
        HttpResponse<String> r = cluster.http(router)
                .send(cluster.http(router)
                        .request("/v1/completions")
                        .header("traceparent", "00-" + TRACE_ID + "-" + CLIENT_SPAN_ID + "-01")
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(new JsonObject()
                                .put("prompt", "Tracing a request across the cluster shows where its time went.")
                                .put("max_tokens", 8)
                                .put("temperature", 0)
                                .encode()))
                        .build());
        assertEquals(200, r.statusCode(), r.body());

        // Spans leave each process in batches about a second apart: a child may come a batch before its parent.
        List<ReceivedSpan> spans = receiver
                .await(
                        s -> services(s).containsAll(Set.of("tandem-router", "tandem-prefill", "tandem-decode"))
                                && names(s).containsAll(Set.of("tandem.stream_end", "tandem.decode.sequence"))
                                && everyParentArrived(s),
                        Duration.ofSeconds(20))
                .stream()
                .filter(s -> s.traceId().equals(TRACE_ID))
                .toList();
        assertEquals(List.of(), receiver.errors());
        System.out.println("trace " + TRACE_ID + ":" + describe(spans));
        Map<String, ReceivedSpan> byName =
                spans.stream().collect(Collectors.toMap(ReceivedSpan::name, Function.identity(), (a, b) -> a));
        assertEquals(
                Set.of("tandem-router", "tandem-prefill", "tandem-decode"), services(spans), () -> describe(spans));
        assertTrue(spans.size() >= 6, () -> describe(spans));
        // The three protocols each delivered their process's spans.
        assertEquals("http/protobuf", byName.get("tandem.request").protocol());
        assertEquals("http/json", byName.get("tandem.prefill.compute").protocol());
        assertEquals("grpc", byName.get("tandem.decode.sequence").protocol());

        // Router: the HTTP server span is the client's child; the request span its child; the stages the request's.
        ReceivedSpan http = parentOf(spans, byName.get("tandem.request"));
        assertEquals(CLIENT_SPAN_ID, http.parentSpanId(), () -> describe(spans));
        assertEquals("SPAN_KIND_SERVER", http.kind());
        for (String stage : List.of(
                "tandem.queue",
                "tandem.schedule",
                "tandem.prefill",
                "tandem.first_token",
                "tandem.decode",
                "tandem.stream_end")) {
            assertNotNull(byName.get(stage), () -> stage + " missing: " + describe(spans));
            assertEquals(
                    byName.get("tandem.request").spanId(), byName.get(stage).parentSpanId(), stage);
        }
        // Prefill worker: under the router's tandem.prefill; the KV transfer too.
        assertDescends(spans, byName.get("tandem.prefill.compute"), byName.get("tandem.prefill"));
        assertDescends(spans, byName.get("tandem.kv.transfer"), byName.get("tandem.prefill"));
        // Decode worker: its sequence under the router's tandem.decode; the KV's receipt under the transfer.
        assertDescends(spans, byName.get("tandem.decode.sequence"), byName.get("tandem.decode"));
        assertTrue(
                spans.stream()
                        .anyMatch(s -> s.service().equals("tandem-decode")
                                && s.parentSpanId()
                                        .equals(byName.get("tandem.kv.transfer").spanId())),
                () -> "no decode-side span under the KV transfer: " + describe(spans));
        // Each process names itself by its node id.
        assertEquals(3, spans.stream().map(ReceivedSpan::instance).distinct().count(), () -> describe(spans));

        String logs = router.logTail(200);
        assertTrue(
                logs.lines()
                        .anyMatch(l -> l.startsWith("{")
                                && l.contains("\"trace_id\":\"" + TRACE_ID + "\"")
                                && l.contains("\"request_id\":")
                                && l.contains("\"level\":\"INFO\"")),
                () -> "no JSON request line with the trace id:\n" + logs);
    }

    private static Set<String> services(List<ReceivedSpan> spans) {
        return spans.stream()
                .filter(s -> s.traceId().equals(TRACE_ID))
                .map(ReceivedSpan::service)
                .collect(Collectors.toSet());
    }

    /** Every span of the trace has its parent among them, but the client's. */
    private static boolean everyParentArrived(List<ReceivedSpan> spans) {
        Set<String> ids = spans.stream()
                .filter(s -> s.traceId().equals(TRACE_ID))
                .map(ReceivedSpan::spanId)
                .collect(Collectors.toSet());
        return spans.stream()
                .filter(s -> s.traceId().equals(TRACE_ID))
                .map(ReceivedSpan::parentSpanId)
                .allMatch(p -> p.isEmpty() || p.equals(CLIENT_SPAN_ID) || ids.contains(p));
    }

    private static Set<String> names(List<ReceivedSpan> spans) {
        return spans.stream().map(ReceivedSpan::name).collect(Collectors.toSet());
    }

    private static ReceivedSpan parentOf(List<ReceivedSpan> spans, ReceivedSpan child) {
        return spans.stream()
                .filter(s -> s.spanId().equals(child.parentSpanId()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no parent of " + child + ": " + describe(spans)));
    }

    /** {@code ancestor} is reached by following parents from {@code span} (across processes). */
    private static void assertDescends(List<ReceivedSpan> spans, ReceivedSpan span, ReceivedSpan ancestor) {
        assertNotNull(span, () -> describe(spans));
        ReceivedSpan at = span;
        for (int hops = 0; hops < 10 && !at.parentSpanId().isEmpty(); hops++) {
            if (at.parentSpanId().equals(ancestor.spanId())) {
                return;
            }
            String parent = at.parentSpanId();
            at = spans.stream()
                    .filter(s -> s.spanId().equals(parent))
                    .findFirst()
                    .orElse(null);
            if (at == null) {
                break;
            }
        }
        throw new AssertionError(span.name() + " is not under " + ancestor.name() + ": " + describe(spans));
    }

    private static String describe(List<ReceivedSpan> spans) {
        StringBuilder b = new StringBuilder();
        for (ReceivedSpan s : spans) {
            b.append("\n  ")
                    .append(s.service())
                    .append(' ')
                    .append(s.name())
                    .append(' ')
                    .append(s.kind())
                    .append(" id=")
                    .append(s.spanId())
                    .append(" parent=")
                    .append(s.parentSpanId());
        }
        return b.toString();
    }
}
