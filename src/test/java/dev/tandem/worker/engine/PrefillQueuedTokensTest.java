package dev.tandem.worker.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.TestNodes;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import io.vertx.core.json.JsonObject;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * A prefill worker's reported queue is the work it has to do: a queued prompt whose prefix its cache holds
 * counts only the rest. Counted whole, a queue of mostly cached prompts looked long, and routers sent
 * long uncached prompts to wait elsewhere.
 */
class PrefillQueuedTokensTest {
    @Test
    void aQueuedPromptCountsOnlyTheTokensItsPrefixCacheDoesNotHold() {
        try (WorkerPairNode pair = WorkerPairNode.startPaced(0, 10_000)) { // 10 ms a computed token
            queueOfCachedPrompts(pair);
        }
    }

    private static void queueOfCachedPrompts(WorkerPairNode pair) {
        int bs = pair.node.engine().kvLayout().blockSize();
        int[] shared = tokens(4 * bs + 1, 3);
        pair.prefill(1, shared).await(); // its four full blocks are cached now

        int[] slow = tokens(40, 7); // 0.4 s of compute ahead of the others
        pair.prefill(2, slow);
        pair.prefill(3, shared);
        pair.prefill(4, Arrays.copyOf(shared, 2 * bs + 1));
        TestNodes.awaitTrue(() -> status(pair).prefilling() == 3, "three prompts accepted");
        assertEquals(slow.length + 1 + 1, status(pair).queuedPrefillTokens(), "the cached prompts' last tokens only");
    }

    private static int[] tokens(int n, int salt) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = 1 + (i * 31 + salt * 17) % 200;
        }
        return t;
    }

    private static WorkerLoad status(WorkerPairNode pair) {
        return WorkerDescriptor.CODEC
                .decode(pair.node
                        .vertx()
                        .eventBus()
                        .<JsonObject>request(Addresses.workerStatus(WorkerPairNode.PREFILL), null)
                        .await()
                        .body())
                .load();
    }
}
