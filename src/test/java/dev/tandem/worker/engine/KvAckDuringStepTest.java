package dev.tandem.worker.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.KvChunk;
import dev.tandem.protocol.Sampling;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.worker.kv.KvTransferCodec;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A decode worker acknowledges KV while its compute thread is busy with a step: the step runs on the
 * compute thread, the ack on the event loop, so a new prompt's first token never waits for the running
 * batch's step. Here a step takes 2 s; prompts prefilled meanwhile must be answered (their KV acknowledged)
 * before that step has completed — an order, not a speed.
 */
class KvAckDuringStepTest {
    private static final long STEP_MICROS = 2_000_000;
    private WorkerPairNode pair;

    @AfterEach
    void stop() {
        if (pair != null) {
            pair.close();
        }
    }

    @Test
    void kvIsAcknowledgedWhileTheBatchStepComputes() {
        pair = WorkerPairNode.startPaced(STEP_MICROS, 0);
        Engine engine = pair.node.engine();
        var bus = pair.node.vertx().eventBus();
        int[] prompt = engine.tokenizer().encode("a batch whose step is slow", true);

        // One sequence decoding: its first step holds the compute thread for STEP_MICROS.
        KvCache cache = engine.newCache();
        engine.prefill(cache, prompt, () -> false);
        Buffer kv = KvTransferCodec.encode(cache, engine.info().fingerprint(), 1 << 20)
                .get(0);
        bus.request(Addresses.decodeKv(WorkerPairNode.DECODE), kv, new KvChunk(1, 0, true, kv).deliveryOptions())
                .await();
        bus.request(
                        Addresses.decodeStart(WorkerPairNode.DECODE),
                        DecodeRequest.CODEC.encode(
                                new DecodeRequest(1, 65, 3, Sampling.GREEDY, new int[0], "nobody", null)))
                .await();

        // Prompts prefilled now ship their KV to the worker in the middle of that step.
        for (long id = 2; id <= 4; id++) {
            assertEquals(id, pair.prefill(id, prompt).await().requestId());
        }
        long steps = WorkerDescriptor.CODEC
                .decode(bus.<JsonObject>request(Addresses.workerStatus(WorkerPairNode.DECODE), null)
                        .await()
                        .body())
                .load()
                .decodeSteps();
        assertTrue(steps == 0, "the KV was acknowledged only after " + steps + " decode step(s) completed");
    }
}
