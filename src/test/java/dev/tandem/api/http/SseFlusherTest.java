package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Streams marked during a turn of the loop are written once each, after the tasks queued at that moment. */
class SseFlusherTest {
    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() {
        vertx.close().await();
    }

    @Test
    void batchesQueuedOnTheLoopGoOutInOneWritePerStream() throws Exception {
        Context loop = vertx.getOrCreateContext();
        List<String> log = new ArrayList<>();
        CompletableFuture<List<String>> done = new CompletableFuture<>();
        loop.runOnContext(v -> {
            SseFlusher flusher = new SseFlusher(loop);
            SseFlusher.Pending a = () -> log.add("write a");
            SseFlusher.Pending b = () -> log.add("write b");
            // A second token batch already queued on the loop behind this one (they arrived together).
            loop.runOnContext(x -> {
                log.add("batch 2");
                flusher.schedule(b);
            });
            flusher.schedule(a);
            log.add("batch 1 done");
            loop.runOnContext(x -> {
                log.add("batch 3");
                flusher.schedule(a);
                loop.runOnContext(y -> done.complete(List.copyOf(log)));
            });
        });
        assertEquals(
                List.of("batch 1 done", "batch 2", "write a", "write b", "batch 3", "write a"),
                done.get(10, TimeUnit.SECONDS));
    }
}
