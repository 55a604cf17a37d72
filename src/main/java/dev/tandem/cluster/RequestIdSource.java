package dev.tandem.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.flakeidgen.FlakeIdGenerator;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;

/**
 * Request ids unique across router replicas, from Hazelcast's FlakeIdGenerator. The generator may
 * call the cluster when its local batch runs out, so ids are prefetched on a worker thread into a
 * local pool: the event loop never waits on the network for an id. Callers that find the pool empty
 * wait in line and are served, in order, as ids arrive.
 *
 * <p>Used from one event-loop context only (the router's); all state is touched on it. A refill's
 * completion may run synchronously inside {@link #refill()} (a fast worker finishes before the
 * listener is attached), so a waiter is always queued before a refill is asked for.
 */
public final class RequestIdSource implements RequestIds {
    private static final int LOW_WATER = 64;
    private static final int REFILL = 256;

    private final Vertx vertx;
    private final FlakeIdGenerator generator;
    private final ArrayDeque<Long> pool = new ArrayDeque<>();
    private final ArrayDeque<Promise<Long>> waiting = new ArrayDeque<>();
    private boolean refilling;

    public RequestIdSource(Vertx vertx, HazelcastInstance hazelcast) {
        this.vertx = vertx;
        this.generator = hazelcast.getFlakeIdGenerator(ClusterNames.REQUEST_IDS);
    }

    @Override
    public Future<Long> next() {
        Future<Long> result;
        if (waiting.isEmpty() && !pool.isEmpty()) {
            result = Future.succeededFuture(pool.poll());
        } else {
            Promise<Long> promise = Promise.promise();
            waiting.add(promise);
            result = promise.future();
        }
        if (pool.size() < LOW_WATER) {
            refill();
        }
        return result;
    }

    private void refill() {
        if (refilling) {
            return;
        }
        refilling = true;
        vertx.<long[]>executeBlocking(
                        () -> {
                            long[] ids = new long[REFILL];
                            for (int i = 0; i < REFILL; i++) {
                                ids[i] = generator.newId();
                            }
                            return ids;
                        },
                        false)
                .onComplete(ar -> {
                    refilling = false;
                    if (ar.failed()) {
                        while (!waiting.isEmpty()) {
                            waiting.poll().fail(ar.cause());
                        }
                        return;
                    }
                    for (long id : ar.result()) {
                        pool.add(id);
                    }
                    while (!waiting.isEmpty() && !pool.isEmpty()) {
                        waiting.poll().complete(pool.poll());
                    }
                    if (!waiting.isEmpty() || pool.size() < LOW_WATER) {
                        refill();
                    }
                });
    }
}
