package dev.tandem.tracing;

import dev.tandem.config.TracingSettings;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.vertx.core.Vertx;
import java.time.Duration;

/**
 * The OTLP exporter for {@code tracing.protocol}. {@code http/protobuf}, the default, is the SDK's own
 * exporter on the JDK's HTTP client. The SDK's gRPC exporter needs OkHttp (and Kotlin) and it has no
 * HTTP/JSON exporter at all, so those two go through {@link VertxOtlpExporter} on the node's Vert.x.
 */
final class OtlpSpanExporters {
    static final Duration TIMEOUT = Duration.ofSeconds(5);

    private OtlpSpanExporters() {}

    /** An exporter and, for those sending through Vert.x, the hook that gives it the node's instance. */
    interface Exporter {
        SpanExporter spans();

        void bind(Vertx vertx);
    }

    static Exporter create(TracingSettings settings) {
        String url = settings.exportUrl();
        if (settings.protocol().equals("http/protobuf")) {
            SpanExporter sdk = OtlpHttpSpanExporter.builder()
                    .setEndpoint(url)
                    .setTimeout(TIMEOUT)
                    .build();
            return new Exporter() {
                @Override
                public SpanExporter spans() {
                    return sdk;
                }

                @Override
                public void bind(Vertx vertx) {}
            };
        }
        VertxOtlpExporter viaVertx = new VertxOtlpExporter(
                url, settings.protocol().equals("grpc") ? VertxOtlpExporter.Wire.GRPC : VertxOtlpExporter.Wire.JSON);
        return new Exporter() {
            @Override
            public SpanExporter spans() {
                return viaVertx;
            }

            @Override
            public void bind(Vertx vertx) {
                viaVertx.bind(vertx);
            }
        };
    }
}
