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
  private final String nodeId;

  private ClusterNode(Vertx vertx, HazelcastClusterManager clusterManager, NodeMetrics metrics, String nodeId) {
    this.nodeId = nodeId;
    this.vertx = vertx;
    this.clusterManager = clusterManager;
    this.metrics = metrics;
  }

  public static Future<ClusterNode> start(ClusterSettings cluster, RouterSettings router) {
    String nodeId = java.util.UUID.randomUUID().toString();
    com.hazelcast.config.Config config = HazelcastConfigFactory.create(cluster, router);
    config.getMemberAttributeConfig().setAttribute(ClusterNames.NODE_ID_ATTRIBUTE, nodeId);
    HazelcastClusterManager manager = new HazelcastClusterManager(config);
    NodeMetrics metrics = new NodeMetrics();
    VertxOptions options = new VertxOptions()
        .setMetricsOptions(metrics.vertxMetricsOptions())
        .setEventBusOptions(new EventBusOptions()
            .setHost(cluster.host())
            .setClusterPublicHost(cluster.host())
            .setPort(0));
    return Vertx.builder().with(options).withClusterManager(manager).withMetrics(metrics.vertxMetricsFactory())
        .buildClustered()
        .map(vertx -> new ClusterNode(vertx, manager, metrics, nodeId));
  }

  public NodeMetrics metrics() {
    return metrics;
  }

  /** What readiness asks first: null while this node is a cluster member, else why not. */
  public String notJoined() {
    var hz = hazelcast();
    return hz.getLifecycleService().isRunning() && hz.getCluster().getLocalMember() != null
        ? null : "not a cluster member";
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

  public Future<Void> close() {
    return vertx.close().eventually(() -> {
      metrics.close();
      return Future.succeededFuture();
    });
  }
}
