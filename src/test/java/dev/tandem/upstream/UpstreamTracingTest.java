package dev.tandem.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.config.TracingSettings;
import dev.tandem.tracing.OtlpReceiver;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A traced request through workers of engine {@code openai}: the GPU servers behind them get the trace's
 * {@code traceparent} on their generation requests (so their own spans, as vLLM's, join the trace), and
 * the workers' spans arrive under the router's.
 */
class UpstreamTracingTest {
    private static final String TRACE_ID = "0af7651916cd43dd8448eb211c80319c";

    @Test
    void theUpstreamsSeeTheTracesContext() throws Exception {
        try (OtlpReceiver receiver = new OtlpReceiver();
                UpstreamCluster cluster = new UpstreamCluster(
                        FakeUpstream.Kind.VLLM,
                        TestNodes.config()
                                .withTracing(new TracingSettings(true, receiver.httpUrl(), "http/protobuf", 0.0)))) {
            FakeUpstream prefill = cluster.fake(true);
            FakeUpstream decode = cluster.fake(false);
            cluster.worker(prefill, "prefill-traced");
            cluster.worker(decode, "decode-traced");
            cluster.awaitModel();

            HttpResponse<String> r = cluster.http.send(cluster.http
                    .request("/v1/completions")
                    .header("traceparent", "00-" + TRACE_ID + "-b7ad6b7169203331-01")
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(new JsonObject()
                            .put("model", FakeUpstream.MODEL)
                            .put("prompt", "The capital of France:")
                            .put("max_tokens", 4)
                            .put("temperature", 0)
                            .encode()))
                    .build());
            assertEquals(200, r.statusCode(), r.body());
            for (FakeUpstream f : List.of(prefill, decode)) {
                assertEquals(1, f.traceparents.size(), f.traceparents::toString);
                String header = f.traceparents.get(0);
                assertNotNull(header, (f.prefillMode ? "prefill" : "decode") + " upstream got no traceparent");
                assertTrue(header.matches("00-" + TRACE_ID + "-[0-9a-f]{16}-01"), header);
            }
            List<OtlpReceiver.ReceivedSpan> spans = receiver.await(
                    s -> s.stream().anyMatch(x -> x.name().equals("tandem.stream_end")), Duration.ofSeconds(10));
            assertTrue(spans.stream().allMatch(s -> s.traceId().equals(TRACE_ID)), spans::toString);
            // The upstream's parent is a span of this trace that the collector received.
            String parent = prefill.traceparents.get(0).substring(36, 52);
            spans = receiver.await(s -> s.stream().anyMatch(x -> x.spanId().equals(parent)), Duration.ofSeconds(5));
            assertTrue(
                    spans.stream().anyMatch(s -> s.spanId().equals(parent)),
                    () -> parent + " not among " + receiver.spans());
        }
    }
}
