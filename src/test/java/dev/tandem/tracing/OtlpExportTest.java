package dev.tandem.tracing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.TracingSettings;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.vertx.core.Vertx;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Each {@code tracing.protocol} delivers a process's spans, with its resource, to a real OTLP receiver. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OtlpExportTest {
    private OtlpReceiver receiver;
    private Vertx vertx;

    @BeforeAll
    void start() {
        receiver = new OtlpReceiver();
        vertx = Vertx.vertx();
    }

    @AfterAll
    void stop() {
        vertx.close().await();
        receiver.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"http/protobuf", "http/json", "grpc"})
    void spansArriveWithTheirParentsAndResource(String protocol) throws Exception {
        String url = protocol.equals("grpc") ? receiver.grpcUrl() : receiver.httpUrl();
        String instance = "node-" + protocol.replace('/', '-');
        Tracing tracing = Tracing.start(new TracingSettings(true, url, protocol, 1.0), "tandem-test", instance);
        tracing.bind(vertx);
        Span parent = tracing.tracer()
                .spanBuilder("parent")
                .setSpanKind(SpanKind.CLIENT)
                .startSpan();
        Span child = Spans.start(tracing.tracer(), "child", Context.root().with(parent));
        child.end();
        parent.end();
        tracing.close(); // flushes

        List<OtlpReceiver.ReceivedSpan> mine = receiver
                .await(
                        s -> s.stream()
                                        .filter(x -> instance.equals(x.instance()))
                                        .count()
                                >= 2,
                        java.time.Duration.ofSeconds(10))
                .stream()
                .filter(s -> instance.equals(s.instance()))
                .toList();
        assertEquals(List.of(), receiver.errors());
        assertEquals(2, mine.size(), () -> "spans: " + receiver.spans());
        OtlpReceiver.ReceivedSpan p =
                mine.stream().filter(s -> s.name().equals("parent")).findFirst().orElseThrow();
        OtlpReceiver.ReceivedSpan c =
                mine.stream().filter(s -> s.name().equals("child")).findFirst().orElseThrow();
        assertEquals(protocol, p.protocol());
        assertEquals("tandem-test", p.service());
        assertEquals("SPAN_KIND_CLIENT", p.kind());
        assertEquals(p.traceId(), c.traceId());
        assertEquals(p.spanId(), c.parentSpanId());
        assertTrue(p.parentSpanId().isEmpty(), "the parent is a root");
    }

    @Test
    void offMakesNoSdkAndNoSpans() {
        Tracing off = Tracing.start(TracingSettings.OFF, "tandem", "x");
        assertSame(Tracing.OFF, off);
        assertFalse(off.enabled());
        assertEquals(null, off.vertxTracerFactory());
        Span span = off.tracer().spanBuilder("x").startSpan();
        assertFalse(span.isRecording());
        assertFalse(Spans.start(off.tracer(), "y", Context.root().with(span)).isRecording());
    }

    @Test
    void sampleRateZeroRecordsNothingNew() {
        Tracing none = Tracing.start(new TracingSettings(true, receiver.httpUrl(), "http/protobuf", 0.0), "t", "z");
        try {
            assertFalse(none.tracer().spanBuilder("x").startSpan().isRecording());
            assertFalse(
                    RequestTrace.begin(none.tracer(), Context.root(), "m", 3).traceId() != null);
        } finally {
            none.close();
        }
    }
}
