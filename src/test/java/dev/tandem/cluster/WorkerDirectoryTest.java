package dev.tandem.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The router's view of the worker registry, on a real Hazelcast member. A registry entry that expires
 * counts as its worker's departure only if it is still gone a grace later: Hazelcast expired a live
 * worker's entry once while partitions migrated (ElasticityIT), and the router failed that worker's
 * request over to nobody. The sorted worker lists every scheduling decision reads are kept between
 * registry changes, and never outlive one.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class WorkerDirectoryTest {
    private ClusterNode node;
    private WorkerDirectory directory;
    private final List<String> removed = new CopyOnWriteArrayList<>();

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        node = ClusterNode.start(config.cluster(), config.router()).await();
        directory = new WorkerDirectory(node.vertx(), node.hazelcast(), node.registrySeal());
        directory.start().await();
        directory.onRemoved(removed::add);
    }

    @AfterAll
    void stop() {
        directory.stop().await();
        node.close().await();
    }

    private static String entry(String workerId, String nodeId) {
        return WorkerDescriptor.CODEC
                .encode(new WorkerDescriptor(workerId, WorkerRole.DECODE, "m", 7L, nodeId, 4, false, WorkerLoad.IDLE))
                .encode();
    }

    @Test
    void anExpiryWhoseEntryIsBackWithinTheGraceKeepsTheWorker() throws Exception {
        node.hazelcast().<String, String>getMap(ClusterNames.WORKERS).set("w-back", entry("w-back", node.nodeId()));
        TestNodes.awaitTrue(() -> directory.get("w-back") != null, Duration.ofSeconds(10), "w-back listed");
        directory.expired("w-back", 200); // as the listener does, while a heartbeat has put it back
        Thread.sleep(800);
        assertNotNull(directory.get("w-back"), "still listed");
        assertEquals(List.of(), removed.stream().filter("w-back"::equals).toList());
    }

    @Test
    void anEntryThatReallyExpiresRemovesTheWorkerAfterTheGrace() {
        node.hazelcast()
                .<String, String>getMap(ClusterNames.WORKERS)
                .set("w-gone", entry("w-gone", node.nodeId()), 1, TimeUnit.SECONDS);
        TestNodes.awaitTrue(() -> directory.get("w-gone") != null, Duration.ofSeconds(10), "w-gone listed");
        TestNodes.awaitTrue(() -> removed.contains("w-gone"), Duration.ofSeconds(20), "w-gone removed");
        assertNull(directory.get("w-gone"));
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
