package dev.tandem.worker.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.KvAck;
import dev.tandem.protocol.KvChunk;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerFailure;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.worker.kv.KvTransferCodec;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The decode worker's side of KV_CACHE: acknowledgement, the byte limit, and freeing unclaimed KV. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KvHandoverTest {
    private static final long PARK_TIMEOUT_MS = 400;
    private static final long KV_LIMIT = 40_000;
    private TandemNode node;
    private Engine engine;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        config = config.withWorker(TestSettings.withMaxKvTransferBytes(
                TestSettings.withKvParkTimeoutMs(config.worker(), PARK_TIMEOUT_MS), KV_LIMIT));
        node = TandemNode.start(config, new TandemNode.Plan(false, List.of(), List.of("decode-x")));
        engine = node.engine();
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private List<Buffer> kvFor(String prompt, long fingerprint) {
        KvCache cache = engine.newCache();
        engine.prefill(cache, engine.tokenizer().encode(prompt, true), () -> false);
        return KvTransferCodec.encode(cache, fingerprint, 4096);
    }

    private Future<Message<JsonObject>> ship(long requestId, List<Buffer> chunks) {
        String address = Addresses.decodeKv("decode-x");
        for (int i = 0; i < chunks.size() - 1; i++) {
            node.vertx()
                    .eventBus()
                    .send(address, chunks.get(i), new KvChunk(requestId, i, false, chunks.get(i)).deliveryOptions());
        }
        int last = chunks.size() - 1;
        return node.vertx()
                .eventBus()
                .request(
                        address,
                        chunks.get(last),
                        new KvChunk(requestId, last, true, chunks.get(last)).deliveryOptions());
    }

    private WorkerLoad status() {
        return WorkerDescriptor.CODEC
                .decode(node.vertx()
                        .eventBus()
                        .<JsonObject>request(Addresses.workerStatus("decode-x"), null)
                        .await()
                        .body())
                .load();
    }

    @Test
    void acknowledgedKvThatNobodyClaimsIsFreedAfterTheTimeout() {
        List<Buffer> chunks = kvFor("parked and forgotten", engine.info().fingerprint());
        long total = chunks.stream().mapToLong(Buffer::length).sum();
        KvAck ack = KvAck.CODEC.decode(ship(77, chunks).await().body());
        assertEquals(total, ack.bytesReceived());
        WorkerLoad parked = status();
        assertEquals(1, parked.parkedKv());
        assertTrue(parked.kvBytesUsed() > 0);
        assertEquals(1, gauge("tandem.kv.parked.requests"));
        assertEquals(parked.kvBytesUsed(), gauge("tandem.kv.parked.bytes"));
        TestNodes.awaitTrue(
                () -> status().parkedKv() == 0 && status().kvBytesUsed() == 0,
                Duration.ofMillis(PARK_TIMEOUT_MS * 10),
                "parked KV to be freed");
        assertEquals(0, gauge("tandem.kv.parked.requests"));
        assertEquals(0, gauge("tandem.kv.parked.bytes"));
    }

    @Test
    void kvStillArrivingIsIncomingOnMetricsUntilItsLastChunkParksIt() {
        List<Buffer> chunks = kvFor(
                "a transfer caught halfway through its chunks", engine.info().fingerprint());
        assertTrue(chunks.size() > 2, chunks.size() + " chunks");
        String address = Addresses.decodeKv("decode-x");
        for (int i = 0; i < chunks.size() - 1; i++) {
            node.vertx()
                    .eventBus()
                    .send(address, chunks.get(i), new KvChunk(78, i, false, chunks.get(i)).deliveryOptions());
        }
        TestNodes.awaitTrue(
                () -> gauge("tandem.kv.incoming.requests") == 1 && gauge("tandem.kv.incoming.bytes") > 0,
                Duration.ofSeconds(5),
                "the transfer to count as incoming");
        assertEquals(0, gauge("tandem.kv.parked.requests"));
        int last = chunks.size() - 1;
        node.vertx()
                .eventBus()
                .request(address, chunks.get(last), new KvChunk(78, last, true, chunks.get(last)).deliveryOptions())
                .await();
        assertEquals(0, gauge("tandem.kv.incoming.requests"));
        assertEquals(0, gauge("tandem.kv.incoming.bytes"));
        assertEquals(1, gauge("tandem.kv.parked.requests"));
        cancel(new dev.tandem.protocol.CancelRequest(78, "cancelled"));
        TestNodes.awaitTrue(
                () -> gauge("tandem.kv.parked.requests") == 0, Duration.ofSeconds(5), "the cancel to free it");
        assertEquals(0, gauge("tandem.kv.parked.bytes"));
    }

    private double gauge(String name) {
        return node.metrics()
                .registry()
                .get(name)
                .tag("worker", "decode-x")
                .gauge()
                .value();
    }

    @Test
    void kvOverTheLimitIsRefusedAtTheHeader() {
        List<Buffer> chunks = kvFor(
                "a prompt long enough that its KV cache is over the byte limit of this worker....",
                engine.info().fingerprint());
        assertEquals(WorkerFailure.KV_TOO_LARGE, failureOf(ship(78, chunks)));
        assertEquals(0, status().incomingKv());
    }

    @Test
    void kvOfAnotherModelIsRefused() {
        List<Buffer> chunks = kvFor("other model", engine.info().fingerprint() ^ 1);
        assertEquals(WorkerFailure.MODEL_MISMATCH, failureOf(ship(79, chunks)));
    }

    @Test
    void aDecodeRequestWithoutKvIsRefused() {
        JsonObject request = dev.tandem.protocol.DecodeRequest.CODEC.encode(new dev.tandem.protocol.DecodeRequest(
                80, 65, 5, dev.tandem.protocol.Sampling.GREEDY, new int[0], "nobody", null));
        assertEquals(
                WorkerFailure.KV_MISSING,
                failureOf(node.vertx().eventBus().request(Addresses.decodeStart("decode-x"), request)));
    }

    @Test
    void aNonJsonMessageToAWorkerIsAnsweredNotDropped() {
        assertEquals(
                WorkerFailure.BAD_REQUEST,
                failureOf(node.vertx().eventBus().request(Addresses.decodeStart("decode-x"), "not json")));
        assertEquals(
                WorkerFailure.BAD_REQUEST,
                failureOf(node.vertx()
                        .eventBus()
                        .request(Addresses.decodeStart("decode-x"), Buffer.buffer(new byte[] {1, 2}))));
    }

    /** Sends a cancel to decode-x and waits for its answer, so it is handled before what follows. */
    private void cancel(dev.tandem.protocol.CancelRequest cancel) {
        node.vertx()
                .eventBus()
                .request(Addresses.decodeCancel("decode-x"), dev.tandem.protocol.CancelRequest.CODEC.encode(cancel))
                .await();
    }

    @Test
    void kvThatArrivesAfterItsCancelIsRefusedNotParked() {
        // The cancel overtook the KV (router and prefill worker are different senders on the bus): before, the
        // KV was acknowledged and parked until the park timeout, counted in kv_used_bytes with nothing in flight.
        // The KV is computed first: the cancel is remembered for the park timeout only, which a slow
        // prefill on a loaded machine outlasted.
        List<Buffer> chunks =
                kvFor("cancelled before its KV came", engine.info().fingerprint());
        cancel(new dev.tandem.protocol.CancelRequest(81, "cancelled"));
        assertEquals(WorkerFailure.CANCELLED, failureOf(ship(81, chunks)));
        WorkerLoad after = status();
        assertEquals(0, after.parkedKv());
        assertEquals(0, after.incomingKv());
        assertEquals(0, after.kvBytesUsed());
    }

    @Test
    void aCancelOfOneAttemptDoesNotRefuseAnotherAttemptsKv() {
        cancel(new dev.tandem.protocol.CancelRequest(82, "moved", 3));
        List<Buffer> chunks = kvFor("moved here again", engine.info().fingerprint());
        KvAck ack = KvAck.CODEC.decode(ship(82, chunks).await().body());
        assertTrue(ack.bytesReceived() > 0);
        cancel(new dev.tandem.protocol.CancelRequest(82, "cancelled"));
        assertEquals(0, status().parkedKv());
    }

    private static WorkerFailure failureOf(Future<?> future) {
        try {
            future.await();
        } catch (CompletionException | ReplyException e) {
            Throwable cause = e instanceof CompletionException ? e.getCause() : e;
            return WorkerFailure.of(cause);
        } catch (RuntimeException e) {
            return WorkerFailure.of(e.getCause() != null ? e.getCause() : e);
        }
        throw new AssertionError("expected a failure");
    }
}
