package dev.tandem.worker.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A prompt's first token must not wait for the prompts queued behind it. Shipping its KV used to be a
 * second task on the prefill compute thread, queued after every prefill accepted meanwhile: under a queue
 * of N prompts the first answered only after all N were computed. Here four prompts of a paced prefill
 * (200 ms each, one at a time) are sent at once: the first is answered a prefill or more before the last.
 * The bound is a sleep's lower bound, not a speed: with the old order all four answered together.
 */
class PrefillQueueOrderTest {
    private static final long PREFILL_MS = 200;
    private WorkerPairNode pair;

    @AfterEach
    void stop() {
        if (pair != null) {
            pair.close();
        }
    }

    @Test
    void eachPromptIsAnsweredWhenItsOwnPrefillIsDone() {
        int[] prompt = {256, 72, 105, 33};
        pair = WorkerPairNode.startPaced(0, PREFILL_MS * 1000 / prompt.length);
        ConcurrentHashMap<Long, Long> answeredAt = new ConcurrentHashMap<>();
        List<Future<?>> replies = new ArrayList<>();
        for (long id = 1; id <= 4; id++) {
            long requestId = id;
            replies.add(pair.prefill(id, prompt).onSuccess(done -> {
                answeredAt.put(requestId, System.nanoTime());
                assertEquals(requestId, done.requestId());
            }));
        }
        Future.all(replies).await();
        long gapMs = TimeUnit.NANOSECONDS.toMillis(answeredAt.get(4L) - answeredAt.get(1L));
        assertTrue(
                gapMs >= PREFILL_MS,
                "the first prompt was answered only " + gapMs + " ms before the last: it waited for the others");
    }
}
