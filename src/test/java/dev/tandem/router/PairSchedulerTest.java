package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.RouterSettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.protocol.BlockHashes;
import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import dev.tandem.router.scheduling.RoutedPrefixTrees;
import dev.tandem.router.scheduling.RoutedPrefixes;
import dev.tandem.router.scheduling.SchedulingObserver;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pairs form only within one model fingerprint: a decode worker no prefill worker can feed (another
 * engine's KV layout, say an external worker of a different kind) is never chosen. Under the
 * {@code cache-aware} policy, the pair comes from this router's routed-prefix trees, never from the
 * prefix index, and the decode worker never prefills itself.
 */
class PairSchedulerTest {

    /** "p1:7" is prefill worker p1 with fingerprint 7, "p1:7!" the same draining; "d1:7" a decode worker. */
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("one pair", List.of("p1:7"), List.of("d1:7"), Set.of(), "p1+d1"),
                Arguments.of(
                        "the decode worker of the other fingerprint has no feeder",
                        List.of("p1:7"),
                        List.of("d1:9", "d2:7"),
                        Set.of(),
                        "p1+d2"),
                Arguments.of(
                        "prefill matches the chosen decode worker",
                        List.of("p1:9", "p2:7"),
                        List.of("d1:7"),
                        Set.of(),
                        "p2+d1"),
                Arguments.of("no feeder at all", List.of("p1:9"), List.of("d1:7"), Set.of(), "missing prefill"),
                Arguments.of(
                        "the feeder failed this request",
                        List.of("p1:7", "p2:9"),
                        List.of("d1:7", "d2:9"),
                        Set.of("p1"),
                        "p2+d2"),
                Arguments.of("no decode workers", List.of("p1:7"), List.of(), Set.of(), "missing decode"),
                Arguments.of("no workers", List.of(), List.of(), Set.of(), "missing decode"),
                Arguments.of("no prefill workers", List.of(), List.of("d1:7"), Set.of(), "missing prefill"),
                Arguments.of(
                        "the only decode worker failed",
                        List.of("p1:7"),
                        List.of("d1:7"),
                        Set.of("d1"),
                        "missing decode"),
                Arguments.of(
                        "the feeders of one fingerprint all drain",
                        List.of("p1:7!", "p2:9"),
                        List.of("d1:7", "d2:9"),
                        Set.of(),
                        "p2+d2"),
                Arguments.of("every feeder drains", List.of("p1:7!"), List.of("d1:7"), Set.of(), "missing prefill"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void choosesWithinOneFingerprint(
            String name, List<String> prefill, List<String> decode, Set<String> avoid, String expected) {
        List<WorkerView> p = workers(WorkerRole.PREFILL, prefill);
        List<WorkerView> d = workers(WorkerRole.DECODE, decode);
        PairScheduler scheduler = CoreHarness.defaultScheduler(role -> role == WorkerRole.PREFILL ? p : d);
        PairScheduler.Choice c = scheduler.choose(null, null, new int[10], avoid);
        assertEquals(
                expected,
                c.missingRole() != null ? "missing " + c.missingRole() : c.prefillWorker() + "+" + c.decodeWorker());
    }

    static List<WorkerView> workers(WorkerRole role, List<String> specs) {
        List<WorkerView> out = new ArrayList<>();
        for (String spec : specs) {
            String[] parts = spec.replace("!", "").split(":");
            out.add(new WorkerView(
                    new WorkerDescriptor(
                            parts[0],
                            role,
                            "m",
                            Long.parseLong(parts[1]),
                            "node",
                            4,
                            spec.endsWith("!"),
                            WorkerLoad.IDLE),
                    0));
        }
        return out;
    }

    private static final RouterSettings CACHE_AWARE =
            TestSettings.withPolicy(TandemConfig.defaults().router(), "cache-aware");

    /** Consulted by nothing under cache-aware: it has no prefix index. */
    private static final PrefixLookup NO_INDEX = hashes -> {
        throw new AssertionError("cache-aware consulted the prefix index");
    };

    /** Prompts of four full 16-token blocks; {@code seed} makes them differ from the first token on. */
    static int[] prompt(int seed) {
        int[] p = new int[4 * 16 + 1];
        Arrays.fill(p, seed);
        return p;
    }

    /** A router's scheduler under {@code cache-aware}, over these workers. */
    private static PairScheduler cacheAware(List<WorkerView> prefill, List<WorkerView> decode) {
        return PairScheduler.forSettings(
                CACHE_AWARE, role -> role == WorkerRole.PREFILL ? prefill : decode, SchedulingObserver.NONE, NO_INDEX);
    }

    /** A worker that announces a 16-token cache and local prefill. */
    static WorkerView cached(String id, WorkerRole role, int inFlight) {
        return new WorkerView(
                new WorkerDescriptor(id, role, "m", 7, "node", 4, false, WorkerLoad.IDLE, new CacheSpec(16, true)),
                inFlight);
    }

    private static List<WorkerView> idle(WorkerRole role, String... ids) {
        return Arrays.stream(ids).map(id -> cached(id, role, 0)).toList();
    }

    @Test
    void cacheAwareSendsARepeatedPromptWhereThisRouterSentItWithoutAnIndex() {
        List<WorkerView> prefill = idle(WorkerRole.PREFILL, "p1", "p2");
        List<WorkerView> decode = idle(WorkerRole.DECODE, "d1", "d2");
        PairScheduler scheduler = cacheAware(prefill, decode);

        // Nothing routed yet: every tree is empty (the smallest), ties round-robin from p1 and d1.
        PairScheduler.Choice first = scheduler.choose(null, null, prompt(1), Set.of());
        assertEquals("p1+d1", first.prefillWorker() + "+" + first.decodeWorker());
        assertEquals(4, trees(scheduler, WorkerRole.PREFILL).size("p1"));
        assertEquals(4, trees(scheduler, WorkerRole.DECODE).size("d1"));

        // The same prompt again: its whole prefix was routed to p1 and d1 (round-robin alone would say p2, d2).
        PairScheduler.Choice second = scheduler.choose(null, null, prompt(1), Set.of());
        assertEquals("p1+d1", second.prefillWorker() + "+" + second.decodeWorker());
        // The router believes d1 holds the prompt, yet no local prefill and no incremental transfer:
        // cache-aware knows nothing of what workers hold.
        assertFalse(second.local());
        assertEquals(0, second.decodeCachedBlocks());
        assertEquals(0, second.prefillCachedBlocks());

        // Another prompt matches nothing: the smallest trees, p2 and d2.
        PairScheduler.Choice other = scheduler.choose(null, null, prompt(2), Set.of());
        assertEquals("p2+d2", other.prefillWorker() + "+" + other.decodeWorker());
        assertEquals(
                Map.of("p1", 4L, "p2", 4L), trees(scheduler, WorkerRole.PREFILL).sizes());
    }

    @Test
    void cacheAwareNeverPrefillsLocally() {
        List<WorkerView> prefill = idle(WorkerRole.PREFILL, "p1");
        List<WorkerView> decode = idle(WorkerRole.DECODE, "d1");
        PairScheduler scheduler = cacheAware(prefill, decode);
        for (int i = 0; i < 5; i++) {
            PairScheduler.Choice c = scheduler.choose(null, null, prompt(1), Set.of());
            assertEquals("p1+d1", c.prefillWorker() + "+" + c.decodeWorker());
            assertFalse(c.local(), "request " + i);
        }
        // Whereas the default policy, with an index saying d1 holds the prompt, prefills it on d1.
        PairScheduler indexed = PairScheduler.forSettings(
                TandemConfig.defaults().router(),
                role -> role == WorkerRole.PREFILL ? prefill : decode,
                SchedulingObserver.NONE,
                hashes -> Map.of("d1", hashes.length));
        PairScheduler.Choice local = indexed.choose(null, null, prompt(1), Set.of());
        assertTrue(local.local());
        assertEquals("d1+d1", local.prefillWorker() + "+" + local.decodeWorker());
    }

    /** A cached worker reporting {@code queued} prompt tokens and a prefill rate of 10,000 tokens/s. */
    private static WorkerView busy(String id, WorkerRole role, int queued) {
        WorkerLoad load = (role == WorkerRole.PREFILL ? WorkerLoad.prefill(0, 0) : WorkerLoad.decode(1, 0, 1 << 30, 1))
                .withLocalPrefill(queued, queued > 0 ? 1 : 0)
                .withPrefillRate(10_000);
        return new WorkerView(
                new WorkerDescriptor(id, role, "m", 7, "node", 4, false, load, new CacheSpec(16, true)), 0);
    }

    @Test
    void theDefaultPrefillsLocallyOnlyWhenThatIsPredictedFaster() {
        // d1 holds 3 of the prompt's 4 blocks: 17 tokens to compute there, 65 on the prefill worker.
        PrefixLookup index = hashes -> Map.of("d1", 3);
        List<WorkerView> prefill = List.of(busy("p1", WorkerRole.PREFILL, 0));
        RouterSettings byDefault = TandemConfig.defaults().router();
        RouterSettings prefillCost = TestSettings.withPolicy(byDefault, "prefill-cost");
        for (int localQueue : new int[] {0, 40, 60}) {
            List<WorkerView> decode = List.of(busy("d1", WorkerRole.DECODE, localQueue));
            PairScheduler timed = PairScheduler.forSettings(
                    byDefault, role -> role == WorkerRole.PREFILL ? prefill : decode, SchedulingObserver.NONE, index);
            PairScheduler untimed = PairScheduler.forSettings(
                    prefillCost, role -> role == WorkerRole.PREFILL ? prefill : decode, SchedulingObserver.NONE, index);
            // 17 + the local queue against 65 on the idle prefill worker.
            assertEquals(
                    localQueue + 17 <= 65,
                    timed.choose(null, null, prompt(1), Set.of()).local(),
                    "" + localQueue);
            assertTrue(untimed.choose(null, null, prompt(1), Set.of()).local(), "prefill-cost, " + localQueue);
        }
    }

    @Test
    void cacheAwareTurnsToTheLeastLoadedWhenImbalanced() {
        List<WorkerView> prefill = new ArrayList<>(idle(WorkerRole.PREFILL, "p1", "p2"));
        List<WorkerView> decode = idle(WorkerRole.DECODE, "d1");
        PairScheduler scheduler = cacheAware(prefill, decode);
        assertEquals("p1", scheduler.choose(null, null, prompt(1), Set.of()).prefillWorker());
        // p1 now has 65 more requests in flight than p2 (over 64 and over 1.5 times): p2, despite the prefix.
        prefill.set(0, cached("p1", WorkerRole.PREFILL, 65));
        assertEquals("p2", scheduler.choose(null, null, prompt(1), Set.of()).prefillWorker());
        // The choice is routed too: both trees now hold the prompt.
        assertEquals(
                Map.of("p1", 4, "p2", 4), trees(scheduler, WorkerRole.PREFILL).leadingBlocks(hashes(1)));
    }

    @Test
    void aWorkerThatLeavesLeavesThisRoutersTreesAndReplicasDoNotShareThem() {
        List<WorkerView> prefill = idle(WorkerRole.PREFILL, "p1", "p2");
        List<WorkerView> decode = idle(WorkerRole.DECODE, "d1");
        PairScheduler a = cacheAware(prefill, decode);
        PairScheduler b = cacheAware(prefill, decode);
        a.choose(null, null, prompt(1), Set.of());
        a.choose(null, null, prompt(2), Set.of());
        assertEquals(Map.of("p1", 4L, "p2", 4L), trees(a, WorkerRole.PREFILL).sizes());
        assertEquals(Map.of(), trees(b, WorkerRole.PREFILL).sizes(), "another replica saw nothing");

        a.forgetWorker("p1");
        a.forgetWorker("d1");
        assertEquals(Map.of("p2", 4L), trees(a, WorkerRole.PREFILL).sizes());
        assertEquals(Map.of(), trees(a, WorkerRole.DECODE).sizes());
    }

    @Test
    void policiesOverTheIndexKeepNoTrees() {
        PairScheduler scheduler = PairScheduler.forSettings(
                TandemConfig.defaults().router(), role -> List.of(), SchedulingObserver.NONE, PrefixLookup.NONE);
        assertTrue(scheduler
                .profile(WorkerRole.PREFILL)
                .stateful(RoutedPrefixes.class)
                .isEmpty());
        assertTrue(scheduler
                .profile(WorkerRole.DECODE)
                .stateful(RoutedPrefixes.class)
                .isEmpty());
        scheduler.forgetWorker("p1"); // nothing to forget
    }

    /** The routed-prefix trees of {@code role}'s profile (cache-aware only). */
    private static RoutedPrefixTrees trees(PairScheduler scheduler, WorkerRole role) {
        return scheduler
                .profile(role)
                .stateful(RoutedPrefixes.class)
                .orElseThrow()
                .trees();
    }

    private static long[] hashes(int seed) {
        return BlockHashes.of(7, 16, prompt(seed));
    }
}
