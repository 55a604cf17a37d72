package dev.tandem.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.TestNodes;
import dev.tandem.cluster.ClusterNames;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.KvCacheEvents;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A router node keeps a prefix index from the workers' KV cache events and forgets a worker that leaves the registry. */
class RouterPrefixIndexTest {
    private TandemNode node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    @Test
    void theRouterIndexesKvEventsAndForgetsAWorkerThatLeavesTheRegistry() {
        node = TandemNode.start(TestNodes.config(), new TandemNode.Plan(true, List.of(), List.of()));
        RouterVerticle router = node.router();
        var registry = node.cluster().hazelcast().<String, String>getMap(ClusterNames.WORKERS);
        WorkerDescriptor worker = new WorkerDescriptor(
                "d-cache", WorkerRole.DECODE, "m", 1, node.cluster().nodeId(), 8, false, new WorkerLoad(0, 0, 0, 1));
        registry.put(worker.workerId(), WorkerDescriptor.CODEC.encode(worker).encode());
        TestNodes.awaitTrue(() -> router.directory().get("d-cache") != null, "the worker registered");

        node.vertx()
                .eventBus()
                .publish(
                        Addresses.KV_EVENTS,
                        KvCacheEvents.CODEC.encode(
                                new KvCacheEvents("d-cache", 1, 0, new long[] {11, 12, 13}, new long[] {13})));
        TestNodes.awaitTrue(() -> router.prefixIndex().entries() == 2, "the router indexed the worker's blocks");
        assertEquals(1, router.prefixIndex().workers());

        registry.remove(worker.workerId());
        TestNodes.awaitTrue(() -> router.prefixIndex().workers() == 0, "the router forgot the worker");
        assertEquals(0, router.prefixIndex().entries());
    }
}
