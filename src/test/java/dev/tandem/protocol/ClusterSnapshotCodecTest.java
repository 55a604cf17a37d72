package dev.tandem.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The console's cluster snapshot: one codec, a round trip through JSON text, and malformed input refused. */
class ClusterSnapshotCodecTest {
    private static final ClusterSnapshot SNAPSHOT = new ClusterSnapshot(
            "router-1",
            1_764_676_800_123L,
            3,
            2.5,
            9,
            3,
            List.of(view("prefill-1", WorkerRole.PREFILL, false, new WorkerLoad(120, 0, 0, 0), 2)),
            List.of(
                    view("decode-1", WorkerRole.DECODE, true, new WorkerLoad(0, 4, 1L << 20, 64L << 20, 77), 1),
                    view("decode-2", WorkerRole.DECODE, false, new WorkerLoad(0, 0, 0, 64L << 20), 0)),
            List.of(
                    new ClusterSnapshot.Router("router-1", "node-a", 3, true),
                    new ClusterSnapshot.Router("router-2", "node-b", 0, false)));

    private static WorkerView view(String id, WorkerRole role, boolean draining, WorkerLoad load, int inFlight) {
        return new WorkerView(
                new WorkerDescriptor(id, role, "tandem-builtin", 42, "node-a", 8, draining, load), inFlight);
    }

    @Test
    void roundTripsThroughJsonText() {
        JsonObject json = new JsonObject(ClusterSnapshot.CODEC.encode(SNAPSHOT).encode());
        assertEquals(SNAPSHOT, ClusterSnapshot.CODEC.decode(json));
        assertEquals(0.75, json.getJsonObject("affinity").getDouble("hit_rate"), 1e-12);
        assertEquals(1, json.getJsonObject("workers").getJsonArray("prefill").size());
        assertEquals(2, json.getJsonObject("workers").getJsonArray("decode").size());
    }

    /** The fields the console reads stay flat beside the registry entry's. */
    @Test
    void aWorkerIsFlatWithItsLoadAndInFlight() {
        JsonObject w = ClusterSnapshot.CODEC
                .encode(SNAPSHOT)
                .getJsonObject("workers")
                .getJsonArray("decode")
                .getJsonObject(0);
        assertEquals("decode-1", w.getString("worker_id"));
        assertEquals(true, w.getBoolean("draining"));
        assertEquals(4, w.getInteger("active_sequences"));
        assertEquals(1L << 20, w.getLong("kv_bytes_used"));
        assertEquals(64L << 20, w.getLong("kv_bytes_capacity"));
        assertEquals(1, w.getInteger("in_flight"));
        assertEquals("decode", w.getString("role"));
        assertNull(w.getValue("load"));
    }

    @Test
    void theHitRateIsNullBeforeAnySessionRequest() {
        ClusterSnapshot none = new ClusterSnapshot("r", 1, 0, 0, 0, 0, List.of(), List.of(), List.of());
        assertNull(none.affinityHitRate());
        JsonObject json = ClusterSnapshot.CODEC.encode(none);
        assertTrue(json.getJsonObject("affinity").containsKey("hit_rate"), "present, as null");
        assertNull(json.getJsonObject("affinity").getValue("hit_rate"));
        assertEquals(none, ClusterSnapshot.CODEC.decode(json));
    }

    static Stream<Consumer<JsonObject>> breakages() {
        return Stream.of(
                j -> j.remove("router"),
                j -> j.put("time", "now"),
                j -> j.remove("affinity"),
                j -> j.getJsonObject("affinity").put("hits", 1.5),
                j -> j.put("workers", new JsonArray()),
                j -> j.getJsonObject("workers").remove("decode"),
                j -> j.getJsonObject("workers").getJsonArray("prefill").add("prefill-9"),
                j -> j.getJsonObject("workers")
                        .getJsonArray("decode")
                        .getJsonObject(0)
                        .put("draining", "yes"),
                j -> j.getJsonObject("workers")
                        .getJsonArray("decode")
                        .getJsonObject(0)
                        .remove("kv_bytes_capacity"),
                j -> j.getJsonArray("routers").getJsonObject(0).remove("self"),
                j -> j.put("routers", new JsonObject()));
    }

    @ParameterizedTest
    @MethodSource("breakages")
    void malformedSnapshotsAreRefused(Consumer<JsonObject> breakage) {
        JsonObject json = ClusterSnapshot.CODEC.encode(SNAPSHOT);
        breakage.accept(json);
        assertThrows(ProtocolException.class, () -> ClusterSnapshot.CODEC.decode(json), json.encode());
    }
}
