package dev.tandem.router.scheduling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code kv-block-cost}: Dynamo's logit, 1 × prefill blocks + decode blocks, in 16-token blocks of 1000
 * bytes. Each row: a prompt, workers with a queue, KV in use and a cache of the prompt, each one's cost,
 * and whom the scorer rates best.
 */
class KvBlockCostScorerTest {
    private static final Scorer COST = new KvBlockCostScorer();

    /** A worker with 16-token blocks of 1000 bytes: {@code queued} prompt tokens, {@code kvUsed} bytes in use. */
    private static WorkerView worker(String id, int queued, long kvUsed) {
        WorkerRole role = id.startsWith("p") ? WorkerRole.PREFILL : WorkerRole.DECODE;
        return new WorkerView(
                new WorkerDescriptor(
                        id,
                        role,
                        "m",
                        7,
                        "node-1",
                        8,
                        false,
                        new WorkerLoad(queued, 0, kvUsed, 100_000),
                        new CacheSpec(16, false, 1000)),
                0,
                0);
    }

    /** A worker that announces no cache: 16-token blocks assumed, no KV counted in blocks, no cache credited. */
    private static WorkerView noCache(String id, long kvUsed) {
        return new WorkerView(
                new WorkerDescriptor(
                        id, WorkerRole.DECODE, "m", 7, "node-1", 8, false, new WorkerLoad(0, 0, kvUsed, 100_000)),
                0,
                0);
    }

    private static SchedulingRequest prompt(int tokens, Map<String, Integer> cachedBlocks) {
        return new SchedulingRequest(null, null, tokens, 0, Set.of(), null, tokens / 16, cachedBlocks);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(
                        // p1: (320 queued + 160) / 16 + (320 / 16 in prefill + 10 new); p2: 160 / 16 + 10 new
                        "nothing cached: the queue counts twice, as prefill and as held blocks",
                        prompt(160, Map.of()),
                        List.of(worker("p1", 320, 0), worker("p2", 0, 0)),
                        new double[] {60, 20},
                        "p2"),
                Arguments.of(
                        // p2: (64 + 32) / 16 + 64 / 16 + 2 new
                        "a holder of 8 of 10 blocks, though busier",
                        prompt(160, Map.of("p2", 8)),
                        List.of(worker("p1", 0, 0), worker("p2", 64, 0)),
                        new double[] {20, 12},
                        "p2"),
                Arguments.of(
                        // d1: 10 + 5 active + 10 new; d2: 0 + 30 active + 0 new
                        "decode: KV in use outweighs a full hit at overlap weight 1",
                        prompt(160, Map.of("d2", 10)),
                        List.of(worker("d1", 0, 5_000), worker("d2", 0, 30_000)),
                        new double[] {25, 30},
                        "d1"),
                Arguments.of(
                        // d1: 10 + 2 active (1500 bytes: ceil 1.5) + 10 new; d2: 10 + 1 + 10
                        "KV in use counts whole blocks, rounded up",
                        prompt(160, Map.of()),
                        List.of(worker("d1", 0, 1_500), worker("d2", 0, 1_000)),
                        new double[] {22, 21},
                        "d2"),
                Arguments.of(
                        // a partial last block is prefilled but is no decode block; d1 holds all 10 full ones
                        "the prompt's partial last block",
                        prompt(170, Map.of("d1", 10)),
                        List.of(worker("d1", 0, 0), worker("d2", 0, 0)),
                        new double[] {10.0 / 16, 170.0 / 16 + 10},
                        "d1"),
                Arguments.of(
                        // n1 announces no cache: its 9000 bytes in use are not counted, nor any cached block
                        "a worker without a cache: 16-token blocks, nothing of its KV counted",
                        prompt(160, Map.of("n1", 10)),
                        List.of(noCache("n1", 9_000), worker("d2", 0, 1_000)),
                        new double[] {20, 21},
                        "n1"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void costsAsDynamo(String name, SchedulingRequest request, List<WorkerView> workers, double[] costs, String best) {
        double[] actual = workers.stream()
                .mapToDouble(w -> KvBlockCostScorer.cost(request, w))
                .toArray();
        assertArrayEquals(costs, actual, 1e-9);
        double[] scores = COST.scores(request, workers);
        int bestIndex = 0;
        for (int i = 1; i < scores.length; i++) {
            if (scores[i] > scores[bestIndex]) {
                bestIndex = i;
            }
        }
        assertEquals(best, workers.get(bestIndex).id());
        assertEquals(1.0, scores[bestIndex], 1e-9);
        for (int i = 0; i < scores.length; i++) {
            assertEquals(scores[i], COST.score(request, workers.get(i), workers), 1e-12);
        }
    }
}
