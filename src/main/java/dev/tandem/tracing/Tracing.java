package dev.tandem.tracing;

import dev.tandem.config.TracingSettings;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.vertx.core.Vertx;
import io.vertx.core.spi.VertxTracerFactory;
import io.vertx.tracing.opentelemetry.OpenTelemetryTracingFactory;
import java.util.concurrent.TimeUnit;

/**
 * One process's tracing: the OpenTelemetry SDK with its OTLP exporter, or nothing at all when
 * {@code tracing.enabled} is false (every span call is then a no-op on a shared object). Vert.x gets it
 * through {@link #vertxTracerFactory()}: its HTTP server makes the request's first span (and takes a
 * client's {@code traceparent}); Tandem's own spans are children of it.
 */
public final class Tracing implements AutoCloseable {
    /** Tracing off: no SDK, no exporter, no-op spans. */
    public static final Tracing OFF = new Tracing(OpenTelemetry.noop(), null, null);

    static final String INSTRUMENTATION = "dev.tandem";

    private final OpenTelemetry openTelemetry;
    private final OpenTelemetrySdk sdk;
    private final OtlpSpanExporters.Exporter exporter;
    private final Tracer tracer;

    private Tracing(OpenTelemetry openTelemetry, OpenTelemetrySdk sdk, OtlpSpanExporters.Exporter exporter) {
        this.openTelemetry = openTelemetry;
        this.sdk = sdk;
        this.exporter = exporter;
        this.tracer = openTelemetry.getTracer(INSTRUMENTATION);
    }

    /**
     * The process's tracing as configured.
     *
     * @param serviceName {@code service.name}: what the process runs ({@code tandem-router}, ...)
     * @param instanceId  {@code service.instance.id}: this process among those of the same name
     */
    public static Tracing start(TracingSettings settings, String serviceName, String instanceId) {
        if (!settings.enabled()) {
            return OFF;
        }
        Resource resource = Resource.getDefault()
                .merge(Resource.create(Attributes.of(
                        AttributeKey.stringKey("service.name"), serviceName,
                        AttributeKey.stringKey("service.instance.id"), instanceId,
                        AttributeKey.stringKey("service.namespace"), "tandem")));
        OtlpSpanExporters.Exporter exporter = OtlpSpanExporters.create(settings);
        SdkTracerProvider provider = SdkTracerProvider.builder()
                .setResource(resource)
                .setSampler(new ApiRequestSampler(settings.sampleRate()))
                .addSpanProcessor(BatchSpanProcessor.builder(exporter.spans())
                        .setScheduleDelay(1, TimeUnit.SECONDS)
                        .build())
                .build();
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(provider)
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        return new Tracing(sdk, sdk, exporter);
    }

    public boolean enabled() {
        return sdk != null;
    }

    public Tracer tracer() {
        return tracer;
    }

    /** For Vert.x's builder ({@code withTracer}); null when tracing is off, so Vert.x traces nothing. */
    public VertxTracerFactory vertxTracerFactory() {
        return sdk == null ? null : new OpenTelemetryTracingFactory(openTelemetry);
    }

    /** The exporters that send through Vert.x (gRPC, HTTP/JSON) use this node's instance once it exists. */
    public void bind(Vertx vertx) {
        if (exporter != null) {
            exporter.bind(vertx);
        }
    }

    /** Sends what is still buffered (at most a few seconds), then stops. */
    @Override
    public void close() {
        if (sdk != null) {
            sdk.shutdown().join(5, TimeUnit.SECONDS);
        }
    }
}
