package dev.tandem.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.flakeidgen.FlakeIdGenerator;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;

/**
 * Request ids unique across router replicas, from Hazelcast's FlakeIdGenerator. The generator may
 * call the cluster when its local batch runs out, so ids are prefetched on a worker thread and
 * handed out from a local pool: the event loop never waits on the network for an id.
 *
 * <p>Used from one event-loop context only.
 */
public final class RequestIdSource {
  private static final int LOW_WATER = 64;
  private static final int REFILL = 256;

  private final Vertx vertx;
  private final FlakeIdGenerator generator;
  private final ArrayDeque<Long> pool = new ArrayDeque<>();
  private Future<Void> refilling;

  public RequestIdSource(Vertx vertx, HazelcastInstance hazelcast) {
    this.vertx = vertx;
    this.generator = hazelcast.getFlakeIdGenerator(ClusterNames.REQUEST_IDS);
  }

  public Future<Long> next() {
    if (pool.size() < LOW_WATER) {
      refill();
    }
    Long id = pool.poll();
    if (id != null) {
      return Future.succeededFuture(id);
    }
    return refill().map(v -> pool.poll());
  }

  private Future<Void> refill() {
    if (refilling == null) {
      refilling = vertx.<long[]>executeBlocking(() -> {
        long[] ids = new long[REFILL];
        for (int i = 0; i < REFILL; i++) {
          ids[i] = generator.newId();
        }
        return ids;
      }, false).map(ids -> {
        for (long id : ids) {
          pool.add(id);
        }
        return (Void) null;
      }).onComplete(ar -> refilling = null);
    }
    return refilling;
  }
}
