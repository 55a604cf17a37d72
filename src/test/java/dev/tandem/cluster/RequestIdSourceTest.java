package dev.tandem.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RequestIdSourceTest {

    @Test
    void theFirstCallerOfAFreshSourceIsServedEvenWhenTheRefillFinishesAtOnce() {
        TandemConfig config = TestNodes.config();
        ClusterNode node = ClusterNode.start(config.cluster(), config.router()).await();
        try {
            Context context = node.vertx().getOrCreateContext();
            for (int round = 0; round < 200; round++) {
                Promise<Long> first = Promise.promise();
                context.runOnContext(v -> new RequestIdSource(node.vertx(), node.hazelcast())
                        .next()
                        .onComplete(first));
                assertNotNull(
                        first.future()
                                .timeout(5, java.util.concurrent.TimeUnit.SECONDS)
                                .await(),
                        "round " + round);
            }
        } finally {
            node.close().await();
        }
    }

    @Test
    void burstsFarLargerThanThePoolAllGetUniqueIds() {
        TandemConfig config = TestNodes.config();
        ClusterNode node = ClusterNode.start(config.cluster(), config.router()).await();
        try {
            Context context = node.vertx().getOrCreateContext();
            Promise<List<Long>> all = Promise.promise();
            context.runOnContext(v -> {
                RequestIdSource ids = new RequestIdSource(node.vertx(), node.hazelcast());
                List<Future<Long>> futures = new ArrayList<>();
                // Three waves: an empty pool with many waiters, then bursts while refills are in flight.
                for (int i = 0; i < 1000; i++) {
                    futures.add(ids.next());
                }
                Future.all(futures).onComplete(ar -> {
                    for (int i = 0; i < 1500; i++) {
                        futures.add(ids.next());
                    }
                    node.vertx().setTimer(1, t -> {
                        for (int i = 0; i < 700; i++) {
                            futures.add(ids.next());
                        }
                        Future.all(futures)
                                .map(x -> futures.stream().map(Future::result).toList())
                                .onComplete(all);
                    });
                });
            });
            List<Long> got = all.future().await();
            Set<Long> unique = new HashSet<>();
            for (Long id : got) {
                assertNotNull(id);
                unique.add(id);
            }
            assertEquals(3200, unique.size());
        } finally {
            node.close().await();
        }
    }
}
