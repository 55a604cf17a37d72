package dev.tandem.metrics;

import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Handler;
import io.vertx.core.spi.VertxMetricsFactory;
import io.vertx.ext.web.RoutingContext;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.PrometheusScrapingHandler;
import io.vertx.micrometer.VertxPrometheusOptions;
import java.util.EnumSet;
import java.util.UUID;

/**
 * One node's Prometheus registry: Tandem's own meters, Vert.x's (event bus, HTTP, pools) and the
 * JVM's. Each node has its own registry — several nodes in one JVM (tests, the embedded mode) do not
 * mix their numbers. Served at {@code GET /metrics}.
 */
public final class NodeMetrics {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JvmGcMetrics gc = new JvmGcMetrics();

    public NodeMetrics() {
        new ClassLoaderMetrics().bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        // What a long run leaks outside the heap shows here first: descriptors (sockets, files) and RSS.
        new FileDescriptorMetrics().bindTo(registry);
        new ProcessMemoryMetrics().bindTo(registry);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** Vert.x's metrics SPI bound to this registry. */
    public VertxMetricsFactory vertxMetricsFactory() {
        return new MicrometerMetricsFactory(registry);
    }

    /**
     * Vert.x metrics on, with labels of bounded cardinality only: no event-bus address (reply
     * addresses are per message) and no raw HTTP path (client-chosen; the route template is kept).
     */
    public MicrometerMetricsOptions vertxMetricsOptions() {
        return new MicrometerMetricsOptions()
                .setEnabled(true)
                .setRegistryName("tandem-" + UUID.randomUUID())
                .setLabels(EnumSet.of(
                        Label.HTTP_ROUTE,
                        Label.HTTP_METHOD,
                        Label.HTTP_CODE,
                        Label.EB_SIDE,
                        Label.EB_FAILURE,
                        Label.POOL_TYPE,
                        Label.POOL_NAME))
                .setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true));
    }

    public Handler<RoutingContext> scrapeHandler() {
        return PrometheusScrapingHandler.create(registry);
    }

    public void close() {
        gc.close();
        registry.close();
    }
}
