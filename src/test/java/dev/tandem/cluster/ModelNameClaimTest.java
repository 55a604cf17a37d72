package dev.tandem.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Workers of two different models under one name, all starting at the same instant: exactly one set of
 * weights gets the name (every worker of it joins), every worker of the other is refused. Checking
 * the registry and then writing to it, as before, let both sets through when they raced.
 */
class ModelNameClaimTest {
    private static final int PER_MODEL = 4;

    @Test
    void ofTwoModelsStartingAtOnceUnderOneNameOnlyOneJoins() {
        TandemConfig config = TestNodes.config();
        ClusterNode node = ClusterNode.start(config.cluster(), config.router()).await();
        try {
            for (int round = 0; round < 6; round++) {
                String name = "model-" + round;
                long base = 100 + round * 10L;
                List<Long> fingerprints = new ArrayList<>();
                List<Future<Void>> starts = new ArrayList<>();
                List<WorkerAnnouncer> announcers = new ArrayList<>();
                Promise<Void> launched = Promise.promise();
                node.vertx().getOrCreateContext().runOnContext(v -> {
                    for (int i = 0; i < 2 * PER_MODEL; i++) {
                        long fingerprint = base + i % 2;
                        WorkerDescriptor d = new WorkerDescriptor(
                                name + "-w" + i,
                                i % 4 < 2 ? WorkerRole.PREFILL : WorkerRole.DECODE,
                                name,
                                fingerprint,
                                node.nodeId(),
                                4,
                                false,
                                WorkerLoad.IDLE);
                        WorkerAnnouncer a =
                                new WorkerAnnouncer(node.vertx(), node.hazelcast(), node.registrySeal(), 200, 2000);
                        announcers.add(a);
                        fingerprints.add(fingerprint);
                        starts.add(a.start(() -> d));
                    }
                    launched.complete();
                });
                launched.future().await();
                Future.join(starts)
                        .timeout(20, TimeUnit.SECONDS)
                        .transform(ar -> Future.succeededFuture())
                        .await();
                Set<Long> joined = new HashSet<>();
                int refused = 0;
                for (int i = 0; i < starts.size(); i++) {
                    if (starts.get(i).succeeded()) {
                        joined.add(fingerprints.get(i));
                    } else {
                        assertTrue(
                                starts.get(i).cause() instanceof WorkerAnnouncer.ModelConflictException,
                                "round " + round + ": " + starts.get(i).cause());
                        refused++;
                    }
                }
                assertEquals(1, joined.size(), "round " + round + ": one set of weights holds the name");
                assertEquals(PER_MODEL, refused, "round " + round + ": the other model's workers are all refused");
                for (WorkerAnnouncer a : announcers) {
                    node.vertx().getOrCreateContext().runOnContext(v -> a.stop());
                }
            }
        } finally {
            node.close().await();
        }
    }
}
