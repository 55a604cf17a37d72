package dev.tandem.worker.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.tandem.protocol.KvChunk;
import dev.tandem.protocol.KvChunkCodec;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Chunks arrive in order with their headers whatever the window, the last as the request that is answered. */
class KvChunkSenderTest {
    private final Vertx vertx = Vertx.vertx();

    {
        vertx.eventBus().registerCodec(KvChunkCodec.INSTANCE); // what a node does when it joins
    }

    @AfterEach
    void close() {
        vertx.close().await();
    }

    private static List<Buffer> chunks(int n) {
        List<Buffer> chunks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            chunks.add(Buffer.buffer().appendInt(i).appendString("x".repeat(i)));
        }
        return chunks;
    }

    private Future<Message<JsonObject>> sendOnContext(List<Buffer> chunks, int window, long timeoutMs) {
        Promise<Message<JsonObject>> reply = Promise.promise();
        vertx.runOnContext(v -> KvChunkSender.send(vertx, "kv.test", chunks, 7, 2, window, timeoutMs)
                .onComplete(reply));
        return reply.future();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 3, 8, 64})
    void everyChunkArrivesInOrderAndTheLastIsAnswered(int window) {
        List<KvChunk> seen = new ArrayList<>();
        vertx.eventBus()
                .<Buffer>consumer("kv.test", m -> {
                    KvChunk chunk = KvChunk.fromMessage(m.headers(), m.body());
                    seen.add(chunk);
                    if (chunk.last()) {
                        m.reply(new JsonObject().put("chunks", seen.size()));
                    }
                })
                .completion()
                .await();
        List<Buffer> chunks = chunks(20);
        Message<JsonObject> reply = sendOnContext(chunks, window, 5_000).await();
        assertEquals(20, reply.body().getInteger("chunks"));
        for (int i = 0; i < 20; i++) {
            KvChunk chunk = seen.get(i);
            assertEquals(i, chunk.index());
            assertEquals(7, chunk.requestId());
            assertEquals(2, chunk.attempt());
            assertEquals(i == 19, chunk.last());
            assertEquals(chunks.get(i), chunk.payload());
        }
    }

    /**
     * Writes that complete at once (a local consumer) must not recurse one stack frame per chunk: a large
     * cache in small chunks overflowed the stack, the event loop's task died and the transfer hung.
     */
    @Test
    void aTransferOfManyChunksDoesNotRecursePerChunk() throws Exception {
        int n = 200_000;
        int[] count = new int[1];
        vertx.eventBus()
                .<Buffer>consumer("kv.test", m -> {
                    count[0]++;
                    if (KvChunk.fromMessage(m.headers(), m.body()).last()) {
                        m.reply(new JsonObject().put("chunks", count[0]));
                    }
                })
                .completion()
                .await();
        List<Buffer> chunks = new ArrayList<>(n);
        Buffer one = Buffer.buffer("kv");
        for (int i = 0; i < n; i++) {
            chunks.add(one);
        }
        Message<JsonObject> reply = sendOnContext(chunks, 64, 60_000)
                .toCompletionStage()
                .toCompletableFuture()
                .get(60, TimeUnit.SECONDS);
        assertEquals(n, reply.body().getInteger("chunks"));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 5})
    void aTransferNobodyTakesFailsInsteadOfHanging(int n) {
        ReplyException e = assertThrows(
                ReplyException.class, () -> sendOnContext(chunks(n), 4, 5_000).await());
        assertEquals(ReplyFailure.NO_HANDLERS, e.failureType());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 4})
    void anUnansweredLastChunkTimesOut(int n) {
        vertx.eventBus().<Buffer>consumer("kv.test", m -> {}).completion().await();
        ReplyException e = assertThrows(
                ReplyException.class, () -> sendOnContext(chunks(n), 2, 200).await());
        assertEquals(ReplyFailure.TIMEOUT, e.failureType());
    }
}
