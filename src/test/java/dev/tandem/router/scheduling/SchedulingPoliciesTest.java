package dev.tandem.router.scheduling;

import static dev.tandem.router.scheduling.Workers.caching;
import static dev.tandem.router.scheduling.Workers.counted;
import static dev.tandem.router.scheduling.Workers.draining;
import static dev.tandem.router.scheduling.Workers.w;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.ConfigException;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerView;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The named policies, each as the profiles {@link SchedulingPolicies#profiles(String)} builds. Above all:
 * {@code default} sends a prompt to the worker holding its prefix, unless that worker is over the load
 * threshold while another is not; {@code cache-aware} follows SGLang's rule over what this router routed.
 * Each row: what it shows, policy, pool, request, workers, the choice.
 */
class SchedulingPoliciesTest {
    private static final int BLOCKS = 4;

    /** A prompt of four full blocks, of which each listed worker caches so many leading ones. */
    private static SchedulingRequest prompt(String session, String affinity, long tick, Map<String, Integer> cached) {
        return new SchedulingRequest(session, affinity, BLOCKS * 16, tick, Set.of(), null, BLOCKS, cached);
    }

    /** A prompt of four full blocks, routed by this router: so many leading ones per worker, tree sizes. */
    private static SchedulingRequest routed(long tick, Map<String, Integer> prefix, Map<String, Long> trees) {
        return new SchedulingRequest(null, null, BLOCKS * 16, tick, Set.of(), null, BLOCKS, Map.of())
                .withRoutedPrefixes(prefix, trees);
    }

    /** A prompt of 100 full blocks (1600 tokens), of which each listed worker caches so many leading ones. */
    private static SchedulingRequest longPrompt(Map<String, Integer> cached) {
        return new SchedulingRequest(null, null, 1600, 0, Set.of(), null, 100, cached);
    }

    private static SchedulingRequest plain(String session, String affinity, long tick) {
        return prompt(session, affinity, tick, Map.of());
    }

    private static WorkerLoad queued(int tokens) {
        return new WorkerLoad(tokens, 0, 0, 0);
    }

    private static WorkerLoad decoding(int sequences, long kvUsed) {
        return new WorkerLoad(0, sequences, kvUsed, 1000);
    }

    static Stream<Arguments> cases() {
        List<WorkerView> prefillBusyHolder = List.of(caching("p1", 0, 0, queued(0)), caching("p2", 1, 0, queued(3000)));
        List<WorkerView> prefillOverloadedHolder = List.of(
                caching("p1", 0, 0, queued(0)), caching("p2", 9, 70_000, queued(0))); // a burst since p2's heartbeat
        List<WorkerView> decodeBusyHolder =
                List.of(counted("d1", 0, 0, decoding(0, 0)), counted("d2", 3, 0, decoding(3, 500)));
        List<WorkerView> decodeFullHolder =
                List.of(counted("d1", 0, 0, decoding(0, 0)), counted("d2", 3, 0, decoding(3, 970)));
        List<WorkerView> allOver =
                List.of(counted("d1", 2, 0, decoding(2, 980)), counted("d2", 3, 0, decoding(3, 990)));
        Map<String, Integer> p2Holds = Map.of("p2", BLOCKS);
        Map<String, Integer> d2Holds = Map.of("d2", BLOCKS);
        return Stream.of(
                // default, prefill: prefill-cost 1 (queued + 4x uncached tokens), under load-threshold. A prompt of
                // 1600 tokens: computing it all costs 6400, against p2's queue of 3000.
                Arguments.of(
                        "the prefix's holder, though busier: its queue is shorter than the compute it saves",
                        "default",
                        "prefill",
                        longPrompt(Map.of("p2", 100)),
                        prefillBusyHolder,
                        "p2"),
                Arguments.of(
                        "not the holder over the queued-token threshold (a burst since its heartbeat)",
                        "default",
                        "prefill",
                        longPrompt(Map.of("p2", 100)),
                        prefillOverloadedHolder,
                        "p1"),
                Arguments.of(
                        "no cached prefix: the shorter queue",
                        "default",
                        "prefill",
                        longPrompt(Map.of()),
                        prefillBusyHolder,
                        "p1"),
                Arguments.of(
                        "a quarter of the prompt cached does not outweigh a queue",
                        "default",
                        "prefill",
                        longPrompt(Map.of("p2", 25)),
                        prefillBusyHolder,
                        "p1"),
                // default, decode: session-affinity 2, prefix-overlap 2, active-sequences 1, kv-utilization 1
                Arguments.of(
                        "the prefix's holder, though busier",
                        "default",
                        "decode",
                        prompt(null, null, 0, d2Holds),
                        decodeBusyHolder,
                        "d2"),
                Arguments.of(
                        "not the holder over the KV threshold",
                        "default",
                        "decode",
                        prompt(null, null, 0, d2Holds),
                        decodeFullHolder,
                        "d1"),
                Arguments.of(
                        "the session's worker",
                        "default",
                        "decode",
                        prompt("s", "d2", 0, Map.of()),
                        decodeBusyHolder,
                        "d2"),
                Arguments.of(
                        "not the session's worker over the KV threshold",
                        "default",
                        "decode",
                        prompt("s", "d2", 0, Map.of()),
                        decodeFullHolder,
                        "d1"),
                Arguments.of(
                        "no session, no prefix: fewer sequences, more free KV",
                        "default",
                        "decode",
                        plain(null, null, 1),
                        decodeBusyHolder,
                        "d1"),
                Arguments.of(
                        "everyone over the thresholds: the holder still",
                        "default",
                        "decode",
                        prompt(null, null, 0, d2Holds),
                        allOver,
                        "d2"),
                Arguments.of(
                        "not a draining holder",
                        "default",
                        "decode",
                        prompt(null, null, 0, d2Holds),
                        List.of(w("d1", 0), draining("d2", 0)),
                        "d1"),
                // seed: least-loaded prefill; session-affinity decode, else round-robin
                Arguments.of(
                        "the fewest in flight, whatever is cached",
                        "seed",
                        "prefill",
                        prompt(null, null, 0, p2Holds),
                        prefillBusyHolder,
                        "p1"),
                Arguments.of(
                        "the session's worker, however full",
                        "seed",
                        "decode",
                        prompt("s", "d2", 0, Map.of()),
                        decodeFullHolder,
                        "d2"),
                Arguments.of(
                        "no session: round-robin (tick 1), whatever is cached",
                        "seed",
                        "decode",
                        prompt(null, null, 1, d2Holds),
                        decodeBusyHolder,
                        "d2"),
                Arguments.of(
                        "no session: round-robin (tick 2)",
                        "seed",
                        "decode",
                        prompt(null, null, 2, d2Holds),
                        decodeBusyHolder,
                        "d1"),
                // round-robin: the tick alone
                Arguments.of(
                        "the tick alone (1)",
                        "round-robin",
                        "prefill",
                        prompt(null, null, 1, Map.of("p1", 4)),
                        prefillBusyHolder,
                        "p2"),
                Arguments.of(
                        "the tick alone (0), whatever the session",
                        "round-robin",
                        "decode",
                        prompt("s", "d2", 0, Map.of()),
                        decodeBusyHolder,
                        "d1"),
                // least-loaded: routers' in-flight counts in both pools
                Arguments.of(
                        "the fewest in flight",
                        "least-loaded",
                        "prefill",
                        prompt(null, null, 1, p2Holds),
                        prefillBusyHolder,
                        "p1"),
                Arguments.of(
                        "the fewest in flight, whatever the session and cache",
                        "least-loaded",
                        "decode",
                        prompt("s", "d2", 1, d2Holds),
                        decodeBusyHolder,
                        "d1"),
                // cache-aware: SGLang's rule over this router's routed prefixes, in both pools
                Arguments.of(
                        "the worker the prompt's prefix was routed to, though busier",
                        "cache-aware",
                        "prefill",
                        routed(0, p2Holds, Map.of("p2", 40L)),
                        prefillBusyHolder,
                        "p2"),
                Arguments.of(
                        "no routed prefix: the smallest tree",
                        "cache-aware",
                        "decode",
                        routed(0, Map.of(), Map.of("d1", 90L, "d2", 10L)),
                        decodeBusyHolder,
                        "d2"),
                Arguments.of(
                        "imbalanced (70 more in flight): the least loaded, whatever was routed",
                        "cache-aware",
                        "decode",
                        routed(0, d2Holds, Map.of("d2", 4L)),
                        List.of(w("d1", 0), w("d2", 70)),
                        "d1"),
                Arguments.of(
                        "not a draining worker the prefix was routed to",
                        "cache-aware",
                        "decode",
                        routed(0, d2Holds, Map.of("d2", 4L)),
                        List.of(w("d1", 0), draining("d2", 0)),
                        "d1"),
                // dynamo: kv-block-cost 1 (prefill blocks + decode blocks) and softmax at temperature 0, both pools.
                // A prompt of 4 blocks: 4 to prefill + 4 new blocks on a worker holding none of it.
                Arguments.of(
                        "the holder, its queue (32 tokens: 2 + 2 blocks) cheaper than the prompt (4 + 4)",
                        "dynamo",
                        "prefill",
                        prompt(null, null, 0, p2Holds),
                        List.of(caching("p1", 0, 0, queued(0)), caching("p2", 1, 0, queued(32))),
                        "p2"),
                Arguments.of(
                        "not the holder whose queue (3000 tokens) costs more than the prompt",
                        "dynamo",
                        "prefill",
                        prompt(null, null, 0, p2Holds),
                        prefillBusyHolder,
                        "p1"),
                Arguments.of(
                        "a queue the routers counted since the heartbeat counts too",
                        "dynamo",
                        "prefill",
                        prompt(null, null, 0, p2Holds),
                        List.of(caching("p1", 0, 0, queued(0)), caching("p2", 1, 3000, queued(0))),
                        "p1"),
                Arguments.of(
                        "no draining worker, however cheap",
                        "dynamo",
                        "decode",
                        plain(null, null, 0),
                        List.of(w("d1", 5), draining("d2", 0)),
                        "d1"),
                // llm-d: prefix-overlap 2, kv-utilization 1, the pool's queue 1; max-score.
                Arguments.of(
                        "the holder of the whole prompt, whatever its queue",
                        "llm-d",
                        "prefill",
                        prompt(null, null, 0, p2Holds),
                        prefillBusyHolder,
                        "p2"),
                Arguments.of(
                        "half the prompt cached on the busier one (2 x 0.5) ties with the idle one's queue (1): round-robin",
                        "llm-d",
                        "prefill",
                        prompt(null, null, 1, Map.of("p2", BLOCKS / 2)),
                        List.of(caching("p1", 0, 0, queued(0)), caching("p2", 1, 0, queued(3000))),
                        "p2"),
                Arguments.of(
                        "decode: the holder even at 97% KV in use (no threshold): 2 + 0.03 against 1 + 1",
                        "llm-d", "decode", prompt(null, null, 0, d2Holds), decodeFullHolder, "d2"),
                Arguments.of(
                        "decode, nothing cached: the fewer sequences and the freer KV",
                        "llm-d",
                        "decode",
                        plain(null, null, 0),
                        decodeBusyHolder,
                        "d1"));
    }

    @ParameterizedTest(name = "{1} {2}: {0} ({5})")
    @MethodSource("cases")
    void choosesAsThePolicySays(
            String name,
            String policy,
            String pool,
            SchedulingRequest request,
            List<WorkerView> workers,
            String expected) {
        SchedulingPolicies.Profiles profiles = SchedulingPolicies.profiles(policy);
        SchedulingProfile profile = pool.equals("prefill") ? profiles.prefill() : profiles.decode();
        assertEquals(pool, profile.name());
        assertEquals(expected, profile.choose(request, workers).orElseThrow().id());
    }

    @Test
    void namesAndUnknownPolicies() {
        assertEquals(
                List.of(
                        "default",
                        "seed",
                        "round-robin",
                        "least-loaded",
                        "cache-aware",
                        "dynamo",
                        "llm-d",
                        "prefill-cost"),
                SchedulingPolicies.names());
        for (String name : SchedulingPolicies.names()) {
            SchedulingPolicies.profiles(name); // every policy's plugins exist
        }
        ConfigException e = assertThrows(ConfigException.class, () -> SchedulingPolicies.profiles("fastest"));
        assertTrue(e.getMessage().contains("'fastest'") && e.getMessage().contains("round-robin"), e.getMessage());
    }
}
