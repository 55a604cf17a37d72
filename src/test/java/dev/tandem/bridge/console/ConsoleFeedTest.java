package dev.tandem.bridge.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.ClusterSnapshot;
import dev.tandem.protocol.RouterLoad;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The console feed on its own: what a snapshot holds, the request rate over a period, and publishing only while watched. */
class ConsoleFeedTest {
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private double ended = 40;
    private double hits = 6;
    private double misses = 2;

    private final List<WorkerView> prefill =
            List.of(worker("prefill-1", WorkerRole.PREFILL, new WorkerLoad(300, 0, 0, 0), 1));
    private final List<WorkerView> decode = List.of(
            worker("decode-1", WorkerRole.DECODE, new WorkerLoad(0, 5, 4096, 1 << 20), 5),
            worker("decode-2", WorkerRole.DECODE, new WorkerLoad(0, 0, 0, 1 << 20), 0));
    private final RouterLoad self = new RouterLoad("router-me", "node-1", 4, Map.of("prefill-1", 1, "decode-1", 3));
    private final RouterLoad other = new RouterLoad("router-b", "node-2", 2, Map.of("decode-1", 2));

    private static WorkerView worker(String id, WorkerRole role, WorkerLoad load, int inFlight) {
        return new WorkerView(
                new WorkerDescriptor(id, role, "tandem-builtin", 7, "node-1", 8, id.equals("decode-2"), load),
                inFlight);
    }

    private ConsoleFeed feed(Vertx vertx, long periodMs) {
        return new ConsoleFeed(
                vertx,
                "router-me",
                new ConsoleFeed.Sources(
                        role -> role == WorkerRole.PREFILL ? prefill : decode,
                        () -> self,
                        () -> List.of(other),
                        () -> 4,
                        () -> ended,
                        () -> hits,
                        () -> misses),
                periodMs,
                nanos::get,
                () -> 1_764_676_800_000L);
    }

    @Test
    void aSnapshotHoldsWorkersRoutersAndRates() {
        ConsoleFeed feed = feed(null, 1000);
        nanos.addAndGet(2_000_000_000L);
        ended += 10;
        ClusterSnapshot s = feed.snapshot();
        assertEquals(5.0, s.requestsPerSecond(), 1e-9, "10 requests ended over 2 s");
        assertEquals(0.75, s.affinityHitRate(), 1e-9);
        assertEquals(4, s.inFlight());
        assertEquals(1_764_676_800_000L, s.timeMillis());
        assertEquals(prefill, s.prefill());
        assertEquals(decode, s.decode());
        assertEquals(
                List.of(
                        new ClusterSnapshot.Router("router-me", "node-1", 4, true),
                        new ClusterSnapshot.Router("router-b", "node-2", 2, false)),
                s.routers());

        // Too soon for a new rate (a new listener's snapshot): the last one stands.
        nanos.addAndGet(50_000_000L);
        ended += 1;
        assertEquals(5.0, feed.snapshot().requestsPerSecond(), 1e-9);
        // Then the window covers everything since the previous rate.
        nanos.addAndGet(950_000_000L);
        assertEquals(1.0, feed.snapshot().requestsPerSecond(), 1e-9);
        nanos.addAndGet(1_000_000_000L);
        assertEquals(0.0, feed.snapshot().requestsPerSecond(), 1e-9);
    }

    @Test
    void publishesOnlyWhileSomeoneListens() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            List<JsonObject> received = new CopyOnWriteArrayList<>();
            vertx.eventBus()
                    .<JsonObject>localConsumer(Addresses.CONSOLE_CLUSTER, m -> received.add(m.body()))
                    .completion()
                    .await();
            ConsoleFeed feed = feed(vertx, 50);
            Thread.sleep(200);
            assertTrue(received.isEmpty(), "nothing published before a listener");
            vertx.runOnContext(v -> feed.listenerAdded());
            TestNodes.awaitTrue(() -> received.size() >= 3, "a snapshot at once, then one per period");
            assertEquals("router-me", received.get(0).getString("router"));
            vertx.runOnContext(v -> feed.listenerAdded());
            vertx.runOnContext(v -> feed.listenerRemoved());
            int before = received.size();
            TestNodes.awaitTrue(() -> received.size() >= before + 2, "still publishing for the listener left");
            vertx.runOnContext(v -> feed.listenerRemoved());
            Thread.sleep(100);
            int stopped = received.size();
            Thread.sleep(300);
            assertEquals(stopped, received.size(), "the timer is cancelled with the last listener");
            assertEquals(0, feed.listeners());
            vertx.runOnContext(v -> feed.listenerRemoved()); // one too many is harmless
            Thread.sleep(50);
            assertEquals(0, feed.listeners());
        } finally {
            vertx.close().await();
        }
    }
}
