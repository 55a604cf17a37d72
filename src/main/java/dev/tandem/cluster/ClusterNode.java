package dev.tandem.cluster;

import com.hazelcast.core.HazelcastInstance;
import dev.tandem.config.ClusterSettings;
import dev.tandem.config.RouterSettings;
import dev.tandem.metrics.NodeMetrics;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;

/**
 * One JVM's clustered Vert.x node and the Hazelcast member under it. Every Tandem process — even the
 * embedded default — is one of these, so the code path is the same from a laptop to Kubernetes.
 */
public final class ClusterNode {
  private final Vertx vertx;
  private final HazelcastClusterManager clusterManager;
  private final NodeMetrics metrics;

  private ClusterNode(Vertx vertx, HazelcastClusterManager clusterManager, NodeMetrics metrics) {
    this.vertx = vertx;
    this.clusterManager = clusterManager;
    this.metrics = metrics;
  }

  public static Future<ClusterNode> start(ClusterSettings cluster, RouterSettings router) {
    HazelcastClusterManager manager = new HazelcastClusterManager(HazelcastConfigFactory.create(cluster, router));
    NodeMetrics metrics = new NodeMetrics();
    VertxOptions options = new VertxOptions()
        .setMetricsOptions(metrics.vertxMetricsOptions())
        .setEventBusOptions(new EventBusOptions()
            .setHost(cluster.host())
            .setClusterPublicHost(cluster.host())
            .setPort(0));
    return Vertx.builder().with(options).withClusterManager(manager).withMetrics(metrics.vertxMetricsFactory())
        .buildClustered()
        .map(vertx -> new ClusterNode(vertx, manager, metrics));
  }

  public NodeMetrics metrics() {
    return metrics;
  }

  /** Joined and still a member: what readiness asks first. */
  public boolean joined() {
    var hz = hazelcast();
    return hz.getLifecycleService().isRunning() && hz.getCluster().getLocalMember() != null;
  }

  public Vertx vertx() {
    return vertx;
  }

  public HazelcastInstance hazelcast() {
    return clusterManager.getHazelcastInstance();
  }

  /**
   * This node's Hazelcast member UUID: registry entries and requests carry it so that what belongs to a
   * member goes when {@link MemberWatch} reports it gone. (Not Vert.x's node id, which is a separate
   * random UUID and never appears in membership events.)
   */
  public String nodeId() {
    return hazelcast().getCluster().getLocalMember().getUuid().toString();
  }

  public Future<Void> close() {
    return vertx.close().eventually(() -> {
      metrics.close();
      return Future.succeededFuture();
    });
  }
}
