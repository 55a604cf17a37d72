package dev.tandem.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.TestTls;
import dev.tandem.config.ClusterSettings;
import dev.tandem.config.ClusterTls;
import dev.tandem.config.TandemConfig;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The cluster's mutual TLS, on four real members of one Hazelcast cluster (issue 33): two with certificates of
 * the cluster CA, one with a certificate of another CA, one with none. Hazelcast lets all four in; the event
 * bus carries messages only between the two, and routers believe only registry entries they can verify — a
 * forged, copied or altered entry changes nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class ClusterTlsTest {
    private static final String ADDRESS = "tandem.test.tls-echo";
    private static final long SEND_TIMEOUT_MS = 500;

    private ClusterNode a;
    private ClusterNode b;
    private ClusterNode rogue;
    private ClusterNode plain;
    private WorkerDirectory directory;

    @BeforeAll
    void start() {
        ClusterSettings cluster = TestNodes.config().cluster();
        TandemConfig defaults = TandemConfig.defaults();
        a = ClusterNode.start(cluster.withTls(TestTls.cluster(false)), defaults.router())
                .await();
        var others = io.vertx.core.Future.all(
                        ClusterNode.start(cluster.withTls(TestTls.cluster(false)), defaults.router()),
                        ClusterNode.start(cluster.withTls(TestTls.cluster(true)), defaults.router()),
                        ClusterNode.start(cluster.withTls(ClusterTls.NONE), defaults.router()))
                .await();
        b = others.resultAt(0);
        rogue = others.resultAt(1);
        plain = others.resultAt(2);
        TestNodes.awaitTrue(
                () -> a.hazelcast().getCluster().getMembers().size() == 4,
                Duration.ofSeconds(30),
                "all four in one Hazelcast cluster (Hazelcast itself authenticates nobody)");
        for (ClusterNode n : List.of(a, b, rogue, plain)) {
            String name = n == a ? "a" : n == b ? "b" : n == rogue ? "rogue" : "plain";
            n.vertx()
                    .eventBus()
                    .<Object>consumer(ADDRESS + "." + name, m -> m.reply("from " + name))
                    .completion()
                    .await();
        }
        directory = new WorkerDirectory(a.vertx(), a.hazelcast(), a.registrySeal());
        directory.start().await();
    }

    @AfterAll
    void stop() {
        if (directory != null) {
            directory.stop().await();
        }
        io.vertx.core.Future.join(java.util.stream.Stream.of(plain, rogue, b, a)
                        .filter(java.util.Objects::nonNull)
                        .map(ClusterNode::close)
                        .toList())
                .await();
    }

    /** Whether {@code from} gets an answer from the consumer on member {@code to}. */
    private static boolean reaches(ClusterNode from, String to) {
        try {
            Object reply = from.vertx()
                    .eventBus()
                    .request(ADDRESS + "." + to, "ping", new DeliveryOptions().setSendTimeout(SEND_TIMEOUT_MS))
                    .await()
                    .body();
            return ("from " + to).equals(reply);
        } catch (RuntimeException e) {
            return false;
        }
    }

    @Test
    void onlyMembersWithTheClusterCertificateExchangeMessages() {
        // The subscriptions are visible to everybody (Hazelcast), so every send is attempted.
        TestNodes.awaitTrue(() -> reaches(a, "b"), Duration.ofSeconds(20), "a reaches b");
        assertTrue(reaches(b, "a"), "b reaches a");
        assertFalse(reaches(a, "rogue"), "a must not deliver to a member of another CA");
        assertFalse(reaches(rogue, "a"), "a member of another CA must not deliver to a");
        assertFalse(reaches(a, "plain"), "a must not deliver to a member without TLS");
        assertFalse(reaches(plain, "b"), "a member without TLS must not deliver to b");
        assertTrue(reaches(b, "a"), "the refusals leave the members' own traffic alone");
    }

    private static String entry(String workerId, ClusterNode node, int queued) {
        return WorkerDescriptor.CODEC
                .encode(new WorkerDescriptor(
                        workerId,
                        WorkerRole.DECODE,
                        "m",
                        7L,
                        node.nodeId(),
                        4,
                        false,
                        WorkerLoad.IDLE.withPrefillRate(queued)))
                .encode();
    }

    @Test
    void onlyEntriesSignedByAClusterCertificateAreBelieved() {
        var map = plain.hazelcast().<String, String>getMap(ClusterNames.WORKERS);
        // b's entry, sealed with its key: believed.
        map.set("decode-b", b.registrySeal().seal("decode-b", entry("decode-b", b, 1)), 60, TimeUnit.SECONDS);
        // Another CA's and none at all: ignored.
        map.set("decode-rogue", rogue.registrySeal().seal("decode-rogue", entry("decode-rogue", rogue, 1)));
        map.set("decode-plain", entry("decode-plain", plain, 1));
        // b's sealed entry copied under another key, and b's entry with its load altered: ignored.
        String copied = b.registrySeal().seal("decode-b2", entry("decode-b2", b, 1));
        map.set("decode-copy", copied);
        TestNodes.awaitTrue(
                () -> directory.all().stream().anyMatch(w -> w.workerId().equals("decode-b")),
                Duration.ofSeconds(10),
                "the signed entry listed");
        JsonObject altered = new JsonObject(map.get("decode-b"));
        altered.put("entry", entry("decode-b", b, 999));
        map.set("decode-b", altered.encode());
        // An unsigned entry written after the forgeries: once it is seen, the forgeries were seen before it.
        map.set("decode-marker", a.registrySeal().seal("decode-marker", entry("decode-marker", a, 1)));
        TestNodes.awaitTrue(
                () -> directory.all().stream().anyMatch(w -> w.workerId().equals("decode-marker")),
                Duration.ofSeconds(10),
                "the marker listed");
        List<String> listed =
                directory.all().stream().map(WorkerDescriptor::workerId).toList();
        assertEquals(List.of("decode-b", "decode-marker"), listed);
        WorkerDescriptor kept = directory.all().get(0);
        assertEquals(1, (int) kept.load().prefillTokensPerSecond(), "the altered load must not replace the signed one");
        assertNull(a.registrySeal().open("decode-copy", copied), "a copy under another key");
    }

    @Test
    void membersDeserializeNoClassOutsideTheAllowedPackages() {
        // Any Serializable class outside Hazelcast's, Vert.x's, the JDK's and Tandem's: what a gadget chain needs.
        var gadget = new org.opentest4j.AssertionFailedError("a class no member should deserialize");
        plain.hazelcast().getMap("tandem.test.gadgets").put("k", gadget);
        RuntimeException refused = org.junit.jupiter.api.Assertions.assertThrows(
                RuntimeException.class,
                () -> a.hazelcast().getMap("tandem.test.gadgets").get("k"));
        assertTrue(
                String.valueOf(refused).contains("org.opentest4j")
                        || String.valueOf(refused.getCause()).contains("org.opentest4j"),
                String.valueOf(refused));
        assertEquals(7L, ((long[]) roundTrip(new long[] {7L}))[0], "what Tandem itself stores still travels");
    }

    private Object roundTrip(Object value) {
        plain.hazelcast().getMap("tandem.test.values").put("v", value);
        return a.hazelcast().getMap("tandem.test.values").get("v");
    }
}
