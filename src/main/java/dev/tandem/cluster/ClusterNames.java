package dev.tandem.cluster;

/** Names of the Hazelcast structures Tandem shares between nodes. */
public final class ClusterNames {
  /** IMap workerId → {@code WorkerDescriptor} JSON, entries expire unless heartbeats refresh them. */
  public static final String WORKERS = "tandem.workers";
  /** IMap session key → decode worker id, idle TTL and size bound, near cache on routers. */
  public static final String AFFINITY = "tandem.affinity";
  /** FlakeIdGenerator for request ids unique across router replicas. */
  public static final String REQUEST_IDS = "tandem.request-ids";

  private ClusterNames() {
  }
}
