package dev.tandem.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.config.KvEventsSettings;
import dev.tandem.protocol.BlockHashes;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two upstream prefill workers, each in front of a vLLM-compatible server whose engine publishes KV
 * events with its own hash scheme, encoding and block size: worker A's engine as older vLLM and SGLang
 * (tagged arrays, integer hashes, blocks of 32 tokens), worker B's as current vLLM (maps, SHA-256 bytes,
 * newer fields, blocks of 8). Tandem's blocks are 16 tokens. The routers place by what the engines hold.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class UpstreamKvEventsTest {
    private static final int PROMPT = 4_000;
    private static final int BLOCK = 16;

    private UpstreamCluster cluster;
    private FakeUpstream engineA;
    private FakeUpstream engineB;
    private FakeKvEventPublisher eventsA;
    private FakeKvEventPublisher eventsB;
    private dev.tandem.node.TandemNode nodeB;

    @BeforeAll
    void start() {
        cluster = new UpstreamCluster(FakeUpstream.Kind.VLLM);
        engineA = cluster.fake(true);
        engineB = cluster.fake(true);
        eventsA = new FakeKvEventPublisher(FakeKvEventPublisher.Encoding.ARRAY, 32);
        eventsB = new FakeKvEventPublisher(FakeKvEventPublisher.Encoding.MAP, 8);
        engineA.onPrompt = eventsA::prefill;
        engineB.onPrompt = eventsB::prefill;
        cluster.worker(withEvents(engineA, eventsA), "prefill-a", true);
        nodeB = cluster.worker(withEvents(engineB, eventsB), "prefill-b", true);
        cluster.worker(cluster.fake(false), "decode-1");
        cluster.awaitModel();
        TestNodes.awaitTrue(
                () -> descriptor("prefill-a") != null && descriptor("prefill-b") != null, "both prefill workers");
    }

    private dev.tandem.config.UpstreamSettings withEvents(FakeUpstream engine, FakeKvEventPublisher events) {
        return cluster.upstream(engine.url())
                .withKvEvents(new KvEventsSettings(events.endpoint, events.replayEndpoint, ""));
    }

    @AfterAll
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
        eventsA.close();
        eventsB.close();
    }

    @ParameterizedTest(name = "held by {0}")
    @ValueSource(strings = {"prefill-a", "prefill-b"})
    @Order(1)
    void aRepeatedLongPromptGoesWhereTheEngineHoldsIt(String holder) throws Exception {
        FakeUpstream engine = holder.equals("prefill-a") ? engineA : engineB;
        FakeUpstream other = engine == engineA ? engineB : engineA;
        int[] prompt = prompt(holder.hashCode());
        // The engine holds the prompt already (an earlier request, another router): its events say so.
        (engine == engineA ? eventsA : eventsB).prefill(prompt);
        awaitLeading(holder, prompt, PROMPT / BLOCK);
        int before = engine.received.size();
        int beforeOther = other.received.size();
        for (int i = 0; i < 20; i++) {
            complete(prompt);
        }
        int there = engine.received.size() - before;
        assertTrue(
                there >= 19,
                holder + " got " + there + " of 20 (the other " + (other.received.size() - beforeOther) + ")");
    }

    @Test
    @Order(2)
    void onceTheEngineRemovesTheBlocksTheNextIsPlacedByLoad() throws Exception {
        int[] prompt = prompt(2);
        eventsA.prefill(prompt);
        awaitLeading("prefill-a", prompt, PROMPT / BLOCK);
        eventsA.evictAll();
        awaitLeading("prefill-a", prompt, 0);
        // A's server now has requests waiting: by load, B is the place.
        engineA.waiting = 3;
        try {
            TestNodes.awaitTrue(
                    () -> descriptor("prefill-a").load().queuedPrefillTokens() > 0, "prefill-a's queue to show");
            int before = engineB.received.size();
            complete(prompt);
            assertEquals(before + 1, engineB.received.size(), "the prompt went to the loaded worker");
        } finally {
            engineA.waiting = 0;
        }
    }

    @Test
    @Order(3)
    void aGapInTheSequenceIsRepairedByReplay() throws Exception {
        int[] missed = prompt(3);
        int[] next = prompt(4);
        eventsB.withholdNext(1);
        eventsB.prefill(missed);
        eventsB.prefill(next);
        eventsB.flush();
        awaitLeading("prefill-b", next, PROMPT / BLOCK);
        // Only the replay endpoint ever sent the withheld batch.
        awaitLeading("prefill-b", missed, PROMPT / BLOCK);
        io.micrometer.core.instrument.MeterRegistry meters = nodeB.metrics().registry();
        assertTrue(
                meters.get("tandem.upstream.kv.events.gaps")
                                .tag("worker", "prefill-b")
                                .functionCounter()
                                .count()
                        >= 1,
                "the gap is counted");
        assertEquals(
                0,
                meters.get("tandem.upstream.kv.events.resets")
                        .tag("worker", "prefill-b")
                        .functionCounter()
                        .count(),
                "and was filled, not reset");
    }

    private static int[] prompt(long seed) {
        Random random = new Random(seed);
        int[] ids = new int[PROMPT];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = 3 + random.nextInt(95);
        }
        return ids;
    }

    private void complete(int[] prompt) {
        JsonArray ids = new JsonArray();
        for (int id : prompt) {
            ids.add(id);
        }
        HttpResponse<String> r = cluster.http.post(
                "/v1/completions",
                new JsonObject()
                        .put("model", FakeUpstream.MODEL)
                        .put("prompt", ids)
                        .put("max_tokens", 1)
                        .encode());
        assertEquals(200, r.statusCode(), r.body());
    }

    private void awaitLeading(String worker, int[] prompt, int blocks) {
        long[] hashes = BlockHashes.of(descriptor(worker).modelFingerprint(), BLOCK, prompt);
        TestNodes.awaitTrue(
                () -> cluster.router.router().prefixIndex().leadingBlocks(worker, hashes) == blocks,
                worker + " to be known to hold " + blocks + " blocks of the prompt");
    }

    private WorkerDescriptor descriptor(String id) {
        return cluster.router.router().directory().workers(WorkerRole.PREFILL).stream()
                .filter(w -> w.workerId().equals(id))
                .findFirst()
                .orElse(null);
    }
}
