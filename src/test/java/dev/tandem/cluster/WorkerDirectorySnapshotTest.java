package dev.tandem.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The directory's sorted worker lists are kept between registry changes (every scheduling decision reads
 * them) and must never outlive one: a join, a heartbeat's new load and a departure each show at once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class WorkerDirectorySnapshotTest {
    private ClusterNode node;
    private WorkerDirectory directory;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        node = ClusterNode.start(config.cluster(), config.router()).await();
        directory = new WorkerDirectory(node.vertx(), node.hazelcast());
        directory.start().await();
    }

    @AfterAll
    void stop() {
        directory.stop().await();
        node.close().await();
    }

    private void register(String workerId, WorkerRole role, int activeSequences) {
        WorkerDescriptor d = new WorkerDescriptor(
                workerId, role, "m", 7L, node.nodeId(), 4, false, new WorkerLoad(0, activeSequences, 0, 0));
        node.hazelcast()
                .<String, String>getMap(ClusterNames.WORKERS)
                .set(workerId, WorkerDescriptor.CODEC.encode(d).encode());
    }

    private List<String> ids(WorkerRole role) {
        return directory.workers(role).stream().map(WorkerDescriptor::workerId).toList();
    }

    @Test
    void joinsUpdatesAndDeparturesShowInTheSortedListsAtOnce() {
        register("s-decode-b", WorkerRole.DECODE, 0);
        TestNodes.awaitTrue(
                () -> ids(WorkerRole.DECODE).contains("s-decode-b"), Duration.ofSeconds(10), "decode b listed");
        // Read twice with nothing changed in between: the same list, not a rebuilt one.
        assertSame(directory.workers(WorkerRole.DECODE), directory.workers(WorkerRole.DECODE));

        register("s-decode-a", WorkerRole.DECODE, 0);
        register("s-prefill", WorkerRole.PREFILL, 0);
        TestNodes.awaitTrue(
                () -> ids(WorkerRole.DECODE).contains("s-decode-a")
                        && ids(WorkerRole.PREFILL).contains("s-prefill"),
                Duration.ofSeconds(10),
                "a and the prefill worker listed");
        assertEquals(
                List.of("s-decode-a", "s-decode-b"),
                ids(WorkerRole.DECODE).stream()
                        .filter(id -> id.startsWith("s-"))
                        .toList());
        assertEquals(
                List.of(),
                ids(WorkerRole.PREFILL).stream()
                        .filter(id -> id.startsWith("s-decode"))
                        .toList());

        register("s-decode-a", WorkerRole.DECODE, 5); // a heartbeat with a new load
        TestNodes.awaitTrue(
                () -> directory.workers(WorkerRole.DECODE).stream()
                        .anyMatch(w ->
                                w.workerId().equals("s-decode-a") && w.load().activeSequences() == 5),
                Duration.ofSeconds(10),
                "a's new load in the list");

        node.hazelcast().<String, String>getMap(ClusterNames.WORKERS).remove("s-decode-b");
        TestNodes.awaitTrue(
                () -> !ids(WorkerRole.DECODE).contains("s-decode-b")
                        && directory.all().stream().noneMatch(w -> w.workerId().equals("s-decode-b")),
                Duration.ofSeconds(10),
                "b gone from both lists");
    }
}
