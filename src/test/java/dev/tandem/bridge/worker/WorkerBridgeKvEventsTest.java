package dev.tandem.bridge.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.BlockHashes;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An external worker that announces a prefix cache at join sends its cache events over the worker bridge;
 * the router's prefix index learns and forgets its blocks as a Java worker's, and a bad event frame gets
 * an {@code err} frame and changes nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WorkerBridgeKvEventsTest {
    private static final AtomicInteger BAD_CASES = new AtomicInteger();

    private static final int BLOCK = 16;
    private final Engine engine = ReferenceEngine.builtin(16);
    private TandemNode node;
    private int port;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        config = config.withWorkerBridge(
                        TestSettings.withToken(config.workerBridge().withTcpPort(0), FakeExternalWorker.TOKEN))
                .withWorker(TestSettings.withHeartbeat(config.worker(), 100, 1000));
        node = TandemNode.start(config, new TandemNode.Plan(true, List.of("prefill-0"), List.of("decode-0")), engine);
        TestNodes.awaitWorkers(node.router(), 1, 1);
        port = node.workerBridge().port();
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    @Test
    void theRoutersIndexLearnsAndForgetsABridgeWorkersBlocks() throws Exception {
        try (FakeExternalWorker worker = new FakeExternalWorker(port, engine)) {
            join(worker, "py-kv-1");
            assertEquals(BLOCK, descriptor("py-kv-1").cache().blockSize());
            long[] prompt = BlockHashes.of(engine.info().fingerprint(), BLOCK, tokens(3 * BLOCK));

            JsonObject first = events(worker, stored(null, 0, 2));
            assertEquals(1, first.getLong("seq"));
            assertEquals(new JsonArray().add(prompt[0]).add(prompt[1]), first.getJsonArray("stored"));
            awaitLeading("py-kv-1", prompt, 2);

            // The third block, chained on the second by its hash.
            events(worker, stored(prompt[1], 2, 3));
            awaitLeading("py-kv-1", prompt, 3);

            JsonObject removed = events(
                    worker,
                    new JsonObject().put("type", "removed").put("block_hashes", new JsonArray().add(prompt[1])));
            assertEquals(3, removed.getLong("seq"));
            awaitLeading("py-kv-1", prompt, 1);

            events(worker, new JsonObject().put("type", "cleared"));
            awaitLeading("py-kv-1", prompt, 0);

            // Stored and removed in one frame: no change, so no batch.
            JsonObject net = worker.client.request(
                    Addresses.WORKER_KV_EVENTS,
                    new JsonObject()
                            .put(
                                    "events",
                                    new JsonArray().add(stored(null, 0, 1)).add(removedBlocks(0, 1))));
            assertEquals(4, net.getJsonObject("body").getLong("seq"));
        }
        TestNodes.awaitTrue(() -> descriptor("py-kv-1") == null, "py-kv-1 to leave");
    }

    /** An event frame's events and why each is refused. */
    record BadEvents(String name, Object body) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<BadEvents> badEvents() {
        JsonArray short1 = new JsonArray().add(new JsonArray().add(1).add(2));
        return Stream.of(
                new BadEvents("a body that is not an object", "stored"),
                new BadEvents("no events", new JsonObject()),
                new BadEvents("an unknown type", frame(new JsonObject().put("type", "evicted"))),
                new BadEvents(
                        "a block shorter than the block size",
                        frame(new JsonObject().put("type", "stored").put("blocks", short1))),
                new BadEvents(
                        "no blocks",
                        frame(new JsonObject().put("type", "stored").put("blocks", new JsonArray()))),
                new BadEvents(
                        "a negative token id",
                        frame(new JsonObject()
                                .put("type", "stored")
                                .put(
                                        "blocks",
                                        new JsonArray()
                                                .add(new JsonArray(IntStream.range(0, BLOCK)
                                                        .map(i -> -1)
                                                        .boxed()
                                                        .toList()))))),
                new BadEvents(
                        "a parent that is no hash", frame(stored(null, 0, 1).put("parent_hash", "abc"))),
                new BadEvents(
                        "hashes that are not integers",
                        frame(new JsonObject().put("type", "removed").put("block_hashes", new JsonArray().add("x")))),
                new BadEvents(
                        "a good event, then a bad one: neither applies",
                        new JsonObject()
                                .put(
                                        "events",
                                        new JsonArray()
                                                .add(removedBlocks(0, 2))
                                                .add(new JsonObject().put("type", "x")))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badEvents")
    void aBadEventFrameIsRefusedAndChangesNothing(BadEvents bad) throws Exception {
        // A name per case: the bridge frees a name when it sees the previous socket close, which may lag.
        String id = "py-kv-bad-" + BAD_CASES.incrementAndGet();
        try (FakeExternalWorker worker = new FakeExternalWorker(port, engine)) {
            join(worker, id);
            long[] prompt = BlockHashes.of(engine.info().fingerprint(), BLOCK, tokens(2 * BLOCK));
            events(worker, stored(null, 0, 2));
            awaitLeading(id, prompt, 2);

            JsonObject err = worker.client.requestWithBody(Addresses.WORKER_KV_EVENTS, bad.body());
            assertEquals("err", err.getString("type"), err.encode());
            assertEquals("invalid_kv_events", err.getString("message"), err.encode());

            // Nothing lost: the blocks are still known, and the next frame is batch 2.
            JsonObject next = events(worker, stored(prompt[1], 2, 2 + 0 + 1));
            assertEquals(2, next.getLong("seq"));
            assertEquals(2, node.router().prefixIndex().leadingBlocks(id, prompt));
        }
        TestNodes.awaitTrue(() -> descriptor(id) == null, id + " to leave");
    }

    @Test
    void aWorkerWithoutACacheMayNotSendEvents() throws Exception {
        try (FakeExternalWorker worker = new FakeExternalWorker(port, engine)) {
            worker.join("prefill", "py-no-cache");
            JsonObject err =
                    worker.client.request(Addresses.WORKER_KV_EVENTS, new JsonObject().put("events", new JsonArray()));
            assertEquals("no_kv_cache", err.getString("message"), err.encode());
            assertEquals(null, descriptor("py-no-cache").cache());
        }
        TestNodes.awaitTrue(() -> descriptor("py-no-cache") == null, "py-no-cache to leave");
    }

    private void join(FakeExternalWorker worker, String id) throws Exception {
        JsonObject body = FakeExternalWorker.joinBody("prefill", engine, id)
                .put("kv_cache", new JsonObject().put("block_size", BLOCK));
        JsonObject reply = worker.client.request(Addresses.WORKER_JOIN, body);
        assertEquals("message", reply.getString("type"), reply.encode());
        TestNodes.awaitTrue(() -> descriptor(id) != null, id + " in the registry");
    }

    private static JsonObject events(FakeExternalWorker worker, JsonObject event) throws Exception {
        JsonObject reply = worker.client.request(Addresses.WORKER_KV_EVENTS, frame(event));
        assertEquals("message", reply.getString("type"), reply.encode());
        return reply.getJsonObject("body");
    }

    private static JsonObject frame(JsonObject event) {
        return new JsonObject().put("events", new JsonArray().add(event));
    }

    /** Blocks {@code from} to {@code to} (exclusive) of {@link #tokens}, after {@code parent}. */
    private static JsonObject stored(Long parent, int from, int to) {
        JsonObject e = new JsonObject().put("type", "stored").put("blocks", blocks(from, to));
        return parent == null ? e : e.put("parent_hash", parent);
    }

    private static JsonObject removedBlocks(int from, int to) {
        return new JsonObject().put("type", "removed").put("blocks", blocks(from, to));
    }

    private static JsonArray blocks(int from, int to) {
        int[] all = tokens(to * BLOCK);
        JsonArray out = new JsonArray();
        for (int b = from; b < to; b++) {
            JsonArray block = new JsonArray();
            for (int i = b * BLOCK; i < (b + 1) * BLOCK; i++) {
                block.add(all[i]);
            }
            out.add(block);
        }
        return out;
    }

    private static int[] tokens(int n) {
        return IntStream.range(0, n).map(i -> 40 + i % 200).toArray();
    }

    private void awaitLeading(String id, long[] prompt, int blocks) {
        TestNodes.awaitTrue(
                () -> node.router().prefixIndex().leadingBlocks(id, prompt) == blocks,
                id + " holding " + blocks + " leading blocks in the router's index");
    }

    private WorkerDescriptor descriptor(String id) {
        return Stream.of(WorkerRole.PREFILL, WorkerRole.DECODE)
                .flatMap(r -> node.router().directory().workers(r).stream())
                .filter(w -> w.workerId().equals(id))
                .findFirst()
                .orElse(null);
    }
}
