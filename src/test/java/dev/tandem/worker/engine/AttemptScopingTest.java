package dev.tandem.worker.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.CancelRequest;
import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.KvChunk;
import dev.tandem.protocol.Sampling;
import dev.tandem.protocol.TokenBatch;
import dev.tandem.protocol.TokenEvent;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerFailure;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.worker.kv.KvTransferCodec;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A router that moves a request to the same decode worker sends a new attempt; whatever the old attempt
 * still sends — a late cancel from its prefill worker, late KV chunks — must not touch the new one.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AttemptScopingTest {
    private static final String WORKER = "decode-a";
    private static final String ROUTER = "router-attempts";
    private TandemNode node;
    private Engine engine;
    private final CompletableFuture<TokenEvent> finished = new CompletableFuture<>();

    @BeforeAll
    void start() {
        // 10 ms a step: the late cancel surely arrives while attempt 2 is still decoding.
        node = TandemNode.start(
                TestNodes.config(),
                new TandemNode.Plan(false, List.of(), List.of(WORKER)),
                new PacedEngine(ReferenceEngine.builtin(16), 10));
        engine = node.engine();
        node.vertx()
                .eventBus()
                .<JsonObject>consumer(Addresses.routerTokens(ROUTER), m -> {
                    for (TokenEvent e : TokenBatch.CODEC.decode(m.body()).events()) {
                        if (e.terminal()) {
                            finished.complete(e);
                        }
                    }
                })
                .completion()
                .await();
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    @Test
    void aLateCancelOrLateKvOfAnOlderAttemptLeavesTheNewOneAlone() throws Exception {
        long id = 900;
        // Attempt 1's KV is parked (its decode request never came: the router moved the request).
        ship(id, 1, kv("moved once")).await();
        // Attempt 2 arrives from another prefill worker: it replaces attempt 1's KV instead of being refused.
        ship(id, 2, kv("moved once")).await();
        assertEquals(1, status().parkedKv());
        // A straggler chunk stream of attempt 1 is refused and leaves attempt 2's KV alone.
        assertEquals(WorkerFailure.KV_TRANSFER_FAILED, failureOf(ship(id, 1, kv("moved once"))));
        assertEquals(1, status().parkedKv());

        DecodeRequest decode = new DecodeRequest(id, 65, 40, Sampling.GREEDY, new int[0], ROUTER, null, 2);
        node.vertx()
                .eventBus()
                .request(Addresses.decodeStart(WORKER), DecodeRequest.CODEC.encode(decode))
                .await();
        // Attempt 1's prefill worker frees "its" KV late: a cancel scoped to attempt 1.
        node.vertx()
                .eventBus()
                .send(
                        Addresses.decodeCancel(WORKER),
                        CancelRequest.CODEC.encode(new CancelRequest(id, "cancelled", 1)));

        // A cancelled sequence ends silently: only a sequence left alone reports its end.
        TokenEvent last = finished.get(20, TimeUnit.SECONDS);
        assertNull(last.error(), last.toString());
        assertTrue(List.of("length", "stop").contains(last.finishReason()), "attempt 2 ran to its end: " + last);
        TestNodes.awaitTrue(() -> status().activeSequences() == 0 && status().kvBytesUsed() == 0, "everything freed");
    }

    @Test
    void anUnscopedCancelStillFreesEveryAttempt() {
        long id = 901;
        ship(id, 3, kv("cancel me")).await();
        node.vertx()
                .eventBus()
                .send(Addresses.decodeCancel(WORKER), CancelRequest.CODEC.encode(new CancelRequest(id, "x")));
        TestNodes.awaitTrue(() -> status().parkedKv() == 0, "the unscoped cancel to free attempt 3's KV");
    }

    private List<Buffer> kv(String prompt) {
        KvCache cache = engine.newCache();
        engine.prefill(cache, engine.tokenizer().encode(prompt, true), () -> false);
        return KvTransferCodec.encode(cache, engine.info().fingerprint(), 1024);
    }

    private Future<Message<JsonObject>> ship(long id, int attempt, List<Buffer> chunks) {
        String address = Addresses.decodeKv(WORKER);
        for (int i = 0; i < chunks.size() - 1; i++) {
            node.vertx()
                    .eventBus()
                    .send(address, chunks.get(i), new KvChunk(id, i, false, chunks.get(i), attempt).deliveryOptions());
        }
        int last = chunks.size() - 1;
        return node.vertx()
                .eventBus()
                .request(
                        address,
                        chunks.get(last),
                        new KvChunk(id, last, true, chunks.get(last), attempt).deliveryOptions());
    }

    private WorkerLoad status() {
        return WorkerDescriptor.CODEC
                .decode(node.vertx()
                        .eventBus()
                        .<JsonObject>request(Addresses.workerStatus(WORKER), null)
                        .await()
                        .body())
                .load();
    }

    private static WorkerFailure failureOf(Future<?> future) {
        Throwable t = assertThrows(Throwable.class, future::await);
        while (!(t instanceof ReplyException) && t.getCause() != null) {
            t = t.getCause();
        }
        return WorkerFailure.of(t);
    }
}
