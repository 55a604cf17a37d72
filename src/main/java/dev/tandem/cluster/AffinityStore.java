package dev.tandem.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import io.vertx.core.Context;
import io.vertx.core.Future;

/**
 * Session affinity shared by every router replica: session key → the decode worker that holds the
 * session's warm KV. Entries idle out and the map is size-bounded (see {@link HazelcastConfigFactory});
 * reads usually hit the near cache.
 */
public final class AffinityStore {
  private final IMap<String, String> map;

  public AffinityStore(HazelcastInstance hazelcast) {
    this.map = hazelcast.getMap(ClusterNames.AFFINITY);
  }

  /** The decode worker recorded for the session, or null; completes on {@code context}. */
  public Future<String> lookup(String sessionKey, Context context) {
    return Future.fromCompletionStage(map.getAsync(sessionKey), context);
  }

  public Future<Void> record(String sessionKey, String decodeWorkerId, Context context) {
    return Future.fromCompletionStage(map.setAsync(sessionKey, decodeWorkerId), context);
  }

  /**
   * Drops every session pinned to a worker that is gone, so no session waits for it. Every router
   * that notices does it; removing twice is harmless. Runs the cluster-wide removal on a worker thread.
   */
  public Future<Void> forgetWorker(io.vertx.core.Vertx vertx, String decodeWorkerId) {
    return vertx.executeBlocking(() -> {
      map.removeAll(com.hazelcast.query.Predicates.equal("this", decodeWorkerId));
      return null;
    }, false);
  }
}
