package dev.tandem.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import dev.tandem.protocol.WorkerDescriptor;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.concurrent.TimeUnit;

/**
 * A worker's presence in the registry map: put with a TTL of a few heartbeats and refreshed on every
 * heartbeat, so a worker that dies without a word disappears by itself.
 */
public final class WorkerAnnouncer {
  private final Vertx vertx;
  private final IMap<String, String> map;
  private final long heartbeatMs;
  private final long ttlMs;
  private volatile WorkerDescriptor descriptor;
  private long timerId = -1;

  public WorkerAnnouncer(Vertx vertx, HazelcastInstance hazelcast, long heartbeatMs, long ttlMs) {
    this.vertx = vertx;
    this.map = hazelcast.getMap(ClusterNames.WORKERS);
    this.heartbeatMs = heartbeatMs;
    this.ttlMs = ttlMs;
  }

  /** Announces the worker and keeps announcing it; completes once the first entry is in the map. */
  public Future<Void> start(WorkerDescriptor descriptor) {
    this.descriptor = descriptor;
    Context context = vertx.getOrCreateContext();
    timerId = vertx.setPeriodic(heartbeatMs, id -> put(context));
    return put(context);
  }

  /** Changes what the next heartbeat says (e.g. draining) and says it now. */
  public Future<Void> update(WorkerDescriptor descriptor) {
    this.descriptor = descriptor;
    return put(vertx.getOrCreateContext());
  }

  private Future<Void> put(Context context) {
    WorkerDescriptor d = descriptor;
    String json = WorkerDescriptor.CODEC.encode(d).encode();
    return Future.fromCompletionStage(map.setAsync(d.workerId(), json, ttlMs, TimeUnit.MILLISECONDS), context);
  }

  /** Stops the heartbeat and removes the entry, so routers stop scheduling onto this worker at once. */
  public Future<Void> stop() {
    if (timerId >= 0) {
      vertx.cancelTimer(timerId);
      timerId = -1;
    }
    if (descriptor == null) {
      return Future.succeededFuture();
    }
    return Future.fromCompletionStage(map.deleteAsync(descriptor.workerId()), vertx.getOrCreateContext())
        .mapEmpty();
  }
}
