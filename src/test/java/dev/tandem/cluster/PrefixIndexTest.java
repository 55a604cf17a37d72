package dev.tandem.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.KvCacheEvents;
import dev.tandem.protocol.KvCacheSnapshot;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The router's prefix index on a local event bus, against fake workers: batches applied in order,
 * queries, forgetting a worker, and the snapshot path — a replica started late, a gap, batches racing
 * a snapshot, a snapshot that fails — each ending with the index equal to the worker's cache.
 */
class PrefixIndexTest {
    private static final long[] NONE = {};

    private final Vertx vertx = Vertx.vertx();
    private final List<Throwable> uncaught = new CopyOnWriteArrayList<>();

    {
        vertx.exceptionHandler(uncaught::add);
    }

    @AfterEach
    void close() {
        vertx.close().await();
        assertEquals(List.of(), uncaught, "nothing may throw on the event loop");
    }

    /** An index on its own event-loop context, as a router replica has it. */
    private record Replica(PrefixIndex index, Context context) {
        <T> T on(Supplier<T> query) {
            CompletableFuture<T> result = new CompletableFuture<>();
            context.runOnContext(v -> {
                try {
                    result.complete(query.get());
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
            try {
                return result.get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        void run(Runnable action) {
            on(() -> {
                action.run();
                return null;
            });
        }

        long[] blocks(String workerId) {
            return on(() -> index.blocks(workerId));
        }

        long lastSeq(String workerId) {
            return on(() -> index.lastSeq(workerId));
        }

        int leading(String workerId, long... prompt) {
            return on(() -> index.leadingBlocks(workerId, prompt));
        }

        Map<String, Integer> leading(long... prompt) {
            return on(() -> index.leadingBlocks(prompt));
        }
    }

    private Replica replica() {
        return replica(PrefixIndex.MAX_BUFFERED);
    }

    private Replica replica(int maxBuffered) {
        Context context = vertx.getOrCreateContext();
        PrefixIndex index =
                new PrefixIndex(vertx, context, 5_000, maxBuffered, System::currentTimeMillis, Long.MAX_VALUE, 0.5);
        index.start().await();
        return new Replica(index, context);
    }

    private FakeKvWorker worker(String id) {
        return new FakeKvWorker(vertx, id).answering();
    }

    private static void awaitTrue(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting until " + what);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    /** Waits until the replica has applied the worker's last batch, then checks it holds the worker's cache. */
    private static void awaitInSync(Replica r, FakeKvWorker w) {
        awaitTrue(w.id + " at batch " + w.seq(), () -> r.lastSeq(w.id) == w.seq());
        assertArrayEquals(w.blocks(), r.blocks(w.id), "the index holds what " + w.id + " caches");
    }

    private static long[] blocks(long... b) {
        return b;
    }

    private record Batch(long[] stored, long[] removed) {}

    private static Batch b(long[] stored, long[] removed) {
        return new Batch(stored, removed);
    }

    static Stream<Arguments> sequences() {
        return Stream.of(
                Arguments.of("one batch", List.of(b(blocks(1, 2, 3), NONE)), blocks(1, 2, 3, 4), 3, 3),
                Arguments.of(
                        "stops at the first missing block",
                        List.of(b(blocks(1, 2, 4), NONE)),
                        blocks(1, 2, 3, 4),
                        2,
                        3),
                Arguments.of("the first block missing", List.of(b(blocks(2, 3), NONE)), blocks(1, 2, 3), 0, 2),
                Arguments.of(
                        "across batches",
                        List.of(b(blocks(1), NONE), b(blocks(2), NONE), b(blocks(3), NONE)),
                        blocks(1, 2, 3),
                        3,
                        3),
                Arguments.of(
                        "stored, then removed, in one batch",
                        List.of(b(blocks(1, 2, 3), blocks(2))),
                        blocks(1, 2, 3),
                        1,
                        2),
                Arguments.of(
                        "evicted at the tail",
                        List.of(b(blocks(1, 2, 3, 4, 5), NONE), b(NONE, blocks(4, 5))),
                        blocks(1, 2, 3, 4, 5),
                        3,
                        3),
                Arguments.of(
                        "evicted at the head",
                        List.of(b(blocks(1, 2, 3), NONE), b(NONE, blocks(1))),
                        blocks(1, 2, 3),
                        0,
                        2),
                Arguments.of(
                        "evicted, then stored again",
                        List.of(b(blocks(1, 2), NONE), b(NONE, blocks(2)), b(blocks(2), NONE)),
                        blocks(1, 2),
                        2,
                        2),
                Arguments.of(
                        "stored twice, counted once",
                        List.of(b(blocks(1, 2), NONE), b(blocks(1, 2), NONE)),
                        blocks(1, 2),
                        2,
                        2),
                Arguments.of(
                        "removing what it never held",
                        List.of(b(blocks(1), blocks(9)), b(NONE, blocks(8))),
                        blocks(1),
                        1,
                        1),
                Arguments.of("an empty prompt", List.of(b(blocks(1), NONE)), NONE, 0, 1),
                Arguments.of("block hash 0", List.of(b(blocks(0, 5), NONE)), blocks(0, 5, 6), 2, 2));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("sequences")
    void appliesBatchesInOrder(String name, List<Batch> batches, long[] prompt, int leading, int entries) {
        Replica r = replica();
        FakeKvWorker w1 = worker("w1");
        batches.forEach(batch -> w1.send(batch.stored(), batch.removed()));
        awaitInSync(r, w1);
        assertEquals(leading, r.leading("w1", prompt));
        assertEquals(leading == 0 ? Map.of() : Map.of("w1", leading), r.leading(prompt));
        assertEquals(entries, r.index().entries());
        assertEquals(1, r.index().workers());
        assertEquals(0, r.index().gaps());
    }

    @Test
    void aWorkersFirstBatchNeedsNoSnapshot() {
        Replica r = replica();
        FakeKvWorker w1 = worker("w1");
        w1.store(1, 2);
        awaitInSync(r, w1);
        assertEquals(0, r.index().snapshots());
    }

    @Test
    void namesEveryWorkerHoldingTheFirstBlock() {
        Replica r = replica();
        FakeKvWorker w1 = worker("w1");
        FakeKvWorker w2 = worker("w2");
        FakeKvWorker w3 = worker("w3");
        w1.store(1, 2, 3);
        w2.store(1, 2, 7);
        w3.store(2, 3);
        for (FakeKvWorker w : List.of(w1, w2, w3)) {
            awaitInSync(r, w);
        }
        assertEquals(Map.of("w1", 3, "w2", 2), r.leading(1, 2, 3, 4));
        assertEquals(Map.of("w1", 1, "w2", 1), r.leading(1));
        assertEquals(Map.of("w1", 2, "w2", 1, "w3", 2), r.leading(2, 3));
        assertEquals(0, r.leading("w3", 1, 2, 3));
        assertEquals(0, r.leading("nobody", 1, 2, 3));
        assertEquals(8, r.index().entries());
        assertEquals(3, r.index().workers());
    }

    @Test
    void aLongPromptIsWalkedOnce() {
        Replica r = replica();
        FakeKvWorker w1 = worker("w1");
        long[] prompt = new long[5_000];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = 0x9E3779B97F4A7C15L * (i + 1);
        }
        w1.send(java.util.Arrays.copyOf(prompt, 4_321), NONE);
        awaitInSync(r, w1);
        assertEquals(4_321, r.leading("w1", prompt));
        assertEquals(Map.of("w1", 4_321), r.leading(prompt));
    }

    @Test
    void duplicateAndOlderBatchesAreIgnored() {
        Replica r = replica();
        FakeKvWorker w1 = worker("w1");
        KvCacheEvents first = w1.store(1, 2);
        KvCacheEvents second = w1.store(3);
        w1.remove(3);
        awaitInSync(r, w1);
        w1.publish(second); // would bring block 3 back
        w1.publish(first);
        w1.publish(second);
        w1.store(4);
        awaitInSync(r, w1);
        assertArrayEquals(blocks(1, 2, 4), r.blocks("w1"));
        assertEquals(0, r.index().snapshots());
        assertEquals(0, r.index().gaps());
    }

    @Test
    void aForgottenWorkerIsNamedNoMoreAndStartsOverWithASnapshot() {
        Replica r = replica();
        FakeKvWorker w1 = worker("w1");
        FakeKvWorker w2 = worker("w2");
        w1.store(1, 2, 3);
        w1.remove(3);
        w2.store(1, 5);
        awaitInSync(r, w1);
        awaitInSync(r, w2);
        assertEquals(4, r.index().entries());

        r.run(() -> r.index().forgetWorker("w1"));
        assertEquals(0, r.leading("w1", 1, 2));
        assertEquals(Map.of("w2", 1), r.leading(1, 2));
        assertEquals(2, r.index().entries());
        assertEquals(1, r.index().workers());
        r.run(() -> r.index().forgetWorker("w1")); // twice: nothing more to drop
        assertEquals(2, r.index().entries());

        w1.store(4);
        awaitInSync(r, w1);
        assertEquals(1, r.index().snapshots());
        assertEquals(Map.of("w1", 2, "w2", 1), r.leading(1, 2));
        assertEquals(5, r.index().entries());
    }

    @Test
    void aReplicaStartedLateSnapshotsAndThenEqualsOneThatSawEverything() {
        Replica early = replica();
        FakeKvWorker w1 = worker("w1");
        w1.store(1, 2, 3);
        w1.store(4, 5);
        w1.remove(2);
        w1.store(6);
        w1.send(blocks(7), blocks(1));
        awaitInSync(early, w1);

        Replica late = replica();
        w1.send(blocks(8, 2), blocks(3));
        awaitInSync(early, w1);
        awaitInSync(late, w1);
        assertArrayEquals(early.blocks("w1"), late.blocks("w1"));
        assertEquals(early.index().entries(), late.index().entries());
        assertEquals(1, late.index().snapshots());
        assertEquals(0, early.index().snapshots());

        w1.store(9);
        awaitInSync(late, w1);
        assertEquals(1, late.index().snapshots(), "in step after the snapshot");
    }

    @Test
    void aGapIsBridgedByASnapshotAndTheBatchesHeldMeanwhile() throws Exception {
        Replica r = replica();
        FakeKvWorker w1 = worker("w1");
        for (int seq = 1; seq <= 7; seq++) {
            w1.store(seq * 10L);
        }
        awaitInSync(r, w1);
        w1.holdSnapshots();
        w1.lose(blocks(80), blocks(10)); // batch 8 never arrives
        KvCacheSnapshot at8 = w1.snapshot();
        w1.send(blocks(90), blocks(20)); // batch 9: a gap
        Message<Object> request = w1.nextRequest();
        awaitTrue("batch 9 held", () -> r.on(() -> r.index().held("w1")).equals(List.of(9L)));
        assertEquals(7, r.lastSeq("w1"));
        assertEquals(1, r.index().gaps());

        request.reply(KvCacheSnapshot.CODEC.encode(at8));
        awaitInSync(r, w1);
        assertEquals(1, r.index().snapshots());
        assertEquals(List.of(), r.on(() -> r.index().held("w1")));
        assertEquals(Map.of("w1", 3), r.leading(30, 40, 50, 10));

        w1.store(100);
        awaitInSync(r, w1);
        assertEquals(1, r.index().snapshots());
        assertEquals(1, r.index().gaps());
    }

    @Test
    void batchesDuringASnapshotAreAppliedAfterItAndOlderOnesDropped() throws Exception {
        FakeKvWorker w1 = worker("w1");
        for (int seq = 1; seq <= 5; seq++) {
            w1.store(seq);
        }
        Replica r = replica(); // saw none of batches 1..5
        w1.holdSnapshots();
        w1.store(100); // batch 6: a worker it does not know, so it asks for a snapshot
        Message<Object> request = w1.nextRequest();
        w1.lose(NONE, blocks(100)); // batch 7 never arrives
        w1.store(300); // batch 8
        KvCacheSnapshot at8 = w1.snapshot();
        w1.send(blocks(200), blocks(1)); // batch 9: after the snapshot
        awaitTrue("batches 6, 8, 9 held", () -> r.on(() -> r.index().held("w1")).equals(List.of(6L, 8L, 9L)));
        assertArrayEquals(NONE, r.blocks("w1"));

        request.reply(KvCacheSnapshot.CODEC.encode(at8));
        awaitInSync(r, w1);
        assertArrayEquals(blocks(2, 3, 4, 5, 200, 300), r.blocks("w1"), "batches 6 and 8 dropped, 9 applied");
        assertEquals(6, r.index().entries());
        assertEquals(1, r.index().snapshots());
        assertEquals(0, r.index().gaps());
    }

    @Test
    void tooManyBatchesDuringASnapshotAreDroppedAndItAsksAgain() throws Exception {
        FakeKvWorker w1 = worker("w1");
        w1.lose(blocks(1), NONE);
        Replica r = replica(3);
        w1.holdSnapshots();
        KvCacheSnapshot at1 = w1.snapshot();
        w1.store(2); // batch 2: asks
        Message<Object> first = w1.nextRequest();
        for (long b = 3; b <= 7; b++) {
            w1.store(b); // batches 3..7: more than 3 held
        }
        // 2, 3, 4 held; 5 finds no room: all dropped, 5, 6, 7 held.
        awaitTrue(
                "the held batches overflowed",
                () -> r.on(() -> r.index().held("w1")).equals(List.of(5L, 6L, 7L)));
        first.reply(KvCacheSnapshot.CODEC.encode(at1)); // older than the batches dropped
        Message<Object> second = w1.nextRequest();
        assertEquals(2, r.index().snapshots());
        second.reply(KvCacheSnapshot.CODEC.encode(w1.snapshot()));
        awaitInSync(r, w1);
        assertArrayEquals(blocks(1, 2, 3, 4, 5, 6, 7), r.blocks("w1"));
    }

    @Test
    void aSnapshotAnsweredAfterTheWorkerWasForgottenIsIgnored() throws Exception {
        FakeKvWorker w1 = worker("w1");
        w1.lose(blocks(1), NONE);
        Replica r = replica();
        w1.holdSnapshots();
        w1.store(2);
        Message<Object> stale = w1.nextRequest();
        r.run(() -> r.index().forgetWorker("w1"));
        stale.reply(KvCacheSnapshot.CODEC.encode(new KvCacheSnapshot("w1", 2, blocks(1, 2, 999))));
        w1.store(3); // starts over
        w1.nextRequest().reply(KvCacheSnapshot.CODEC.encode(w1.snapshot()));
        awaitInSync(r, w1);
        assertEquals(3, r.index().entries());
        assertEquals(1, r.index().workers());
        assertEquals(2, r.index().snapshots());
    }

    static Stream<Arguments> failedSnapshots() {
        return Stream.of(
                Arguments.of("no worker answers", (Consumer<Message<Object>>) null),
                Arguments.of("the worker fails it", (Consumer<Message<Object>>) m -> m.fail(500, "boom")),
                Arguments.of("a malformed answer", (Consumer<Message<Object>>)
                        m -> m.reply(new JsonObject().put("seq", "x"))),
                Arguments.of("another worker's snapshot", (Consumer<Message<Object>>)
                        m -> m.reply(KvCacheSnapshot.CODEC.encode(new KvCacheSnapshot("w2", 9, blocks(1))))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("failedSnapshots")
    void aFailedSnapshotForgetsTheWorkerUntilItsNextBatch(String name, Consumer<Message<Object>> answer)
            throws Exception {
        Replica r = replica();
        FakeKvWorker w1 = worker("w1");
        w1.store(1, 2);
        awaitInSync(r, w1);
        w1.lose(blocks(3), NONE);
        if (answer == null) {
            w1.silent();
        } else {
            w1.holdSnapshots();
        }
        w1.store(4); // a gap
        if (answer != null) {
            answer.accept(w1.nextRequest());
        }
        awaitTrue("the worker forgotten", () -> r.index().workers() == 0);
        assertArrayEquals(NONE, r.blocks("w1"));
        assertEquals(Map.of(), r.leading(1, 2));
        assertEquals(0, r.index().entries());
        assertEquals(1, r.index().snapshots());

        if (answer == null) {
            w1.answering();
        } else {
            w1.answerSnapshots();
        }
        w1.store(5); // the next batch asks again
        awaitInSync(r, w1);
        assertEquals(2, r.index().snapshots());
        assertEquals(Map.of("w1", 3), r.leading(1, 2, 3), "the lost batch is in the snapshot");
    }

    @Test
    void aWorkerWhoseSnapshotsKeepLeavingAGapIsForgottenNotAskedForever() throws Exception {
        Replica r = replica();
        FakeKvWorker w1 = worker("w1");
        w1.store(1);
        awaitInSync(r, w1);
        w1.holdSnapshots();
        w1.lose(blocks(2), NONE);
        w1.store(3); // a gap: batch 3 held
        KvCacheSnapshot stale = new KvCacheSnapshot("w1", 1, blocks(1));
        for (int i = 0; i <= PrefixIndex.MAX_RETRIES; i++) {
            w1.nextRequest().reply(KvCacheSnapshot.CODEC.encode(stale));
        }
        awaitTrue("the worker forgotten", () -> r.index().workers() == 0);
        assertEquals(PrefixIndex.MAX_RETRIES + 1, r.index().snapshots());
        assertEquals(0, w1.requestsHeld());
        assertEquals(0, r.index().entries());

        w1.answerSnapshots();
        w1.store(4); // the next batch asks again
        awaitInSync(r, w1);
    }

    static Stream<Arguments> malformedBodies() {
        JsonObject valid = KvCacheEvents.CODEC.encode(new KvCacheEvents("w1", 1, 1_000, blocks(7), NONE));
        return Stream.of(
                Arguments.of("a string", "not json"),
                Arguments.of("a buffer", Buffer.buffer("{}")),
                Arguments.of("an array", new JsonArray().add(1)),
                Arguments.of("nothing", null),
                Arguments.of("an empty object", new JsonObject()),
                Arguments.of("no worker", valid.copy().put("worker_id", "")),
                Arguments.of("seq 0", valid.copy().put("seq", 0)),
                Arguments.of("seq not a number", valid.copy().put("seq", "1")),
                Arguments.of("no time", valid.copy().putNull("time")),
                Arguments.of("stored not an array", valid.copy().put("stored", 7)),
                Arguments.of("a block not an integer", valid.copy().put("stored", new JsonArray().add("7"))),
                Arguments.of("a fractional block", valid.copy().put("removed", new JsonArray().add(1.5))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedBodies")
    void malformedBodiesAreDroppedWithoutHarm(String name, Object body) {
        Replica r = replica();
        FakeKvWorker w1 = worker("w1");
        vertx.eventBus().publish(Addresses.KV_EVENTS, body);
        w1.store(1, 2);
        awaitInSync(r, w1);
        assertEquals(2, r.index().entries());
        assertEquals(1, r.index().workers());
        assertEquals(0, r.index().snapshots());
    }

    @Test
    void theLagIsReceiptTimeMinusSendTime() {
        Context context = vertx.getOrCreateContext();
        PrefixIndex index = new PrefixIndex(vertx, context, 5_000, 10, () -> 50_250, Long.MAX_VALUE, 0.5);
        index.start().await();
        Replica r = new Replica(index, context);
        FakeKvWorker w1 = worker("w1");
        w1.timeMillis(50_000);
        w1.store(1);
        awaitInSync(r, w1);
        assertEquals(250, index.lastEventLagMillis());
    }

    @Test
    void atItsBoundTheIndexRecordsNoMoreBlocksUntilRemovalsMakeRoom() {
        Context context = vertx.getOrCreateContext();
        PrefixIndex index = new PrefixIndex(vertx, context, 5_000, 10, System::currentTimeMillis, 3, 0.5);
        Replica r = new Replica(index, context);
        r.on(() -> {
            index.accept(new KvCacheEvents("w1", 1, 0, blocks(1, 2), NONE), 0);
            index.accept(new KvCacheEvents("w2", 1, 0, blocks(7, 8), NONE), 0);
            return null;
        });
        assertEquals(3, index.entries());
        assertEquals(1, index.dropped(), "block 8 did not fit");
        assertArrayEquals(blocks(7), r.blocks("w2"));
        r.on(() -> {
            index.accept(new KvCacheEvents("w1", 2, 0, blocks(3), blocks(1, 2)), 0);
            index.accept(new KvCacheEvents("w2", 2, 0, blocks(8, 9), NONE), 0);
            return null;
        });
        assertArrayEquals(blocks(3), r.blocks("w1"), "a batch's removals make room after its own stores");
        assertArrayEquals(blocks(7, 8), r.blocks("w2"));
        assertEquals(3, index.entries());
        assertEquals(2, index.dropped());
    }

    @Test
    void aBlockHeldOnlyInTheLowerTierCountsAtItsFraction() {
        Context context = vertx.getOrCreateContext();
        PrefixIndex index = new PrefixIndex(vertx, context, 5_000, 10, System::currentTimeMillis, Long.MAX_VALUE, 0.5);
        Replica r = new Replica(index, context);
        r.on(() -> {
            // Blocks 1–2 on the GPU, 3–6 offloaded, 7 on the GPU again after a gap in neither tier.
            index.accept(new KvCacheEvents("w1", 1, 0, blocks(1, 2, 8), NONE, blocks(3, 4, 5, 6), NONE), 0);
            // Only offloaded: still named, at half a block each.
            index.accept(new KvCacheEvents("w2", 1, 0, NONE, NONE, blocks(1, 2, 3), NONE), 0);
            return null;
        });
        assertEquals(Map.of("w1", 2 + 2, "w2", 1), r.leading(1, 2, 3, 4, 5, 6, 7, 8));
        assertEquals(10, index.entries());
        r.on(() -> {
            // Offloaded blocks evicted from CPU memory; the GPU's copy of 1 evicted too.
            index.accept(new KvCacheEvents("w1", 2, 0, NONE, blocks(1), NONE, blocks(3, 4, 5, 6)), 0);
            return null;
        });
        assertEquals(Map.of("w2", 1), r.leading(1, 2, 3));
        assertEquals(0, r.leading("w1", new long[] {1, 2}));
        assertEquals(5, index.entries());
    }

    @Test
    void stopUnsubscribesAndForgets() {
        Replica r = replica();
        FakeKvWorker w1 = worker("w1");
        w1.store(1);
        awaitInSync(r, w1);
        r.index().stop().await();
        assertEquals(0, r.index().entries());
        assertEquals(0, r.index().workers());
        assertArrayEquals(NONE, r.blocks("w1"));
    }
}
