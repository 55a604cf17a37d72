package dev.tandem.cluster;

import com.hazelcast.core.HazelcastInstance;
import dev.tandem.config.ClusterSettings;
import dev.tandem.config.RouterSettings;
import dev.tandem.protocol.KvChunkCodec;
import dev.tandem.security.RegistrySeal;
import dev.tandem.tracing.Tracing;
import io.opentelemetry.api.trace.Tracer;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.metrics.MetricsOptions;
import io.vertx.core.spi.VertxMetricsFactory;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.concurrent.CompletableFuture;

/**
 * One JVM's clustered Vert.x node and the Hazelcast member under it. Every Tandem process — even the
 * embedded default — is one of these, so the code path is the same from a laptop to Kubernetes.
 */
public final class ClusterNode {
    private final Vertx vertx;
    private final HazelcastClusterManager clusterManager;
    private final String nodeId;
    private final RegistrySeal registrySeal;
    private final Tracing tracing;

    private ClusterNode(
            Vertx vertx,
            HazelcastClusterManager clusterManager,
            String nodeId,
            RegistrySeal registrySeal,
            Tracing tracing) {
        this.nodeId = nodeId;
        this.tracing = tracing;
        this.registrySeal = registrySeal;
        this.vertx = vertx;
        this.clusterManager = clusterManager;
    }

    /** Joins the cluster without Vert.x meters (tests of the cluster layer). */
    public static Future<ClusterNode> start(ClusterSettings cluster, RouterSettings router) {
        return start(cluster, router, new MetricsOptions(), null);
    }

    /** Joins the cluster; Vert.x reports its own meters through {@code metricsOptions} and {@code metricsFactory}. */
    public static Future<ClusterNode> start(
            ClusterSettings cluster,
            RouterSettings router,
            MetricsOptions metricsOptions,
            VertxMetricsFactory metricsFactory) {
        return start(
                cluster,
                router,
                metricsOptions,
                metricsFactory,
                java.util.UUID.randomUUID().toString(),
                Tracing.OFF);
    }

    /**
     * Joins the cluster as {@code nodeId}; Vert.x traces through {@code tracing} (its HTTP server opens a
     * request's first span), and the node closes it — sending what is buffered — before Vert.x.
     */
    public static Future<ClusterNode> start(
            ClusterSettings cluster,
            RouterSettings router,
            MetricsOptions metricsOptions,
            VertxMetricsFactory metricsFactory,
            String nodeId,
            Tracing tracing) {
        com.hazelcast.config.Config config = HazelcastConfigFactory.create(cluster, router);
        config.getMemberAttributeConfig().setAttribute(ClusterNames.NODE_ID_ATTRIBUTE, nodeId);
        HazelcastClusterManager manager = new HazelcastClusterManager(config);
        VertxOptions options = new VertxOptions()
                .setMetricsOptions(metricsOptions)
                .setEventBusOptions(ClusterTlsOptions.eventBus(cluster));
        var builder = Vertx.builder().with(options).withClusterManager(manager);
        if (metricsFactory != null) {
            builder.withMetrics(metricsFactory);
        }
        if (tracing.vertxTracerFactory() != null) {
            builder.withTracer(tracing.vertxTracerFactory());
        }
        return builder.buildClustered().compose(vertx -> {
            vertx.eventBus().registerCodec(KvChunkCodec.INSTANCE);
            tracing.bind(vertx);
            // Reading PEM files and validating the chain block: a worker thread, once per node.
            return vertx.executeBlocking(() -> ClusterTlsOptions.registrySeal(vertx, cluster, manager), false)
                    .map(seal -> new ClusterNode(vertx, manager, nodeId, seal, tracing))
                    .recover(e -> vertx.close().transform(v -> Future.failedFuture(e)));
        });
    }

    /** What readiness asks first: null while this node is a cluster member, else why not. */
    public String notJoined() {
        var hz = hazelcast();
        return hz.getLifecycleService().isRunning() && hz.getCluster().getLocalMember() != null
                ? null
                : "not a cluster member";
    }

    public Vertx vertx() {
        return vertx;
    }

    public HazelcastInstance hazelcast() {
        return clusterManager.getHazelcastInstance();
    }

    /**
     * This node's id: registry entries and requests carry it so that what belongs to a member goes when
     * {@link MemberWatch} reports it gone. Our own id, kept as a member attribute — not the Hazelcast
     * member UUID, which Hazelcast renews when split clusters merge or a member rejoins.
     */
    public String nodeId() {
        return nodeId;
    }

    /** How this node signs and checks worker registry entries ({@link RegistrySeal#NONE} without cluster TLS). */
    public RegistrySeal registrySeal() {
        return registrySeal;
    }

    /** Where this node's own spans go (a no-op tracer when tracing is off). */
    public Tracer tracer() {
        return tracing.tracer();
    }

    public Future<Void> close() {
        if (!tracing.enabled()) {
            return vertx.close();
        }
        // Flushing waits on the collector (a few seconds at most), over Vert.x's client for some protocols:
        // a thread of its own, before Vert.x closes. Not chained on a Vert.x future, whose callbacks would
        // run on a context that the close stops.
        Promise<Void> closed = Promise.promise();
        CompletableFuture.runAsync(() -> {
            tracing.close();
            vertx.close().onComplete(closed);
        });
        return closed.future();
    }
}
