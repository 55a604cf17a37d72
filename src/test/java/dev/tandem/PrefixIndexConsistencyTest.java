package dev.tandem;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.MemorySettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.KvLayout;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.SamplingParams;
import dev.tandem.node.Engines;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.BlockHashes;
import dev.tandem.protocol.KvCacheSnapshot;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The router's prefix index against the workers' real caches: after prompts that overflow a small prefill
 * cache (so blocks are evicted) and fill the decode worker's kept blocks, the index names, for each worker
 * and prompt, exactly the leading blocks the worker's own snapshot holds, and holds no other block.
 */
class PrefixIndexConsistencyTest {
    private static final int PROMPTS = 8;

    private TandemNode node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    @Test
    void afterEvictionsTheIndexMatchesWhatEachWorkerHolds() throws Exception {
        TandemConfig config = TestNodes.config();
        int blockSize = config.worker().kvBlockSize();
        Engine engine = Engines.forModel(config.model(), blockSize);
        long blockBytes = KvLayout.of(engine.info().config(), blockSize).blockBytes();
        node = TandemNode.start(
                TestSettings.withRouter(
                        config.withWorker(config.worker().withPrefixCacheBytes(12 * blockBytes)),
                        TestSettings.withLocalPrefillMaxTokens(config.router(), 0)),
                TandemNode.Plan.embedded(1, 1),
                engine);
        TestNodes.awaitWorkers(node.router(), 1, 1);
        List<long[]> prompts = send(0, 1, 2, 3, 4, 5, 6, 7);
        String prefill = node.prefillWorkers().get(0).descriptor().workerId();
        String decode = node.decodeWorkers().get(0).descriptor().workerId();
        Set<Long> prefillHeld = snapshot(prefill);
        assertTrue(prefillHeld.size() <= 12, "the prefill cache stays in its bound: " + prefillHeld.size());
        assertTrue(
                prompts.stream().anyMatch(p -> !prefillHeld.contains(p[0])),
                "some prompt's blocks were evicted from the prefill worker");
        assertIndexMatches(prefill, decode, prompts);
    }

    /**
     * The soak's leak: a decode worker kept finished sequences up to a capacity above the heap. With a small
     * budget the configured 4 GiB is lowered to the worker's share (logged with both numbers), the kept
     * blocks stay within it by evicting the least recently used, and the removals reach the router's index.
     */
    @Test
    void aDecodeWorkerAtItsBudgetShareEvictsLeastRecentlyUsedAndTheIndexFollows() throws Exception {
        TandemConfig config = TestNodes.config();
        List<String> warnings = new ArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                    warnings.add(r.getMessage());
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        Logger logger = Logger.getLogger(TandemNode.class.getName());
        logger.addHandler(capture);
        try {
            node = TandemNode.start(
                    TestSettings.withMemory(
                            TestSettings.withRouter(
                                    config.withWorker(config.worker().withKvCapacityBytes(4L << 30)),
                                    TestSettings.withLocalPrefillMaxTokens(config.router(), 0)),
                            new MemorySettings(MemorySettings.DEFAULT_HEAP_FRACTION, 1 << 20, true)),
                    TandemNode.Plan.embedded(1, 1));
        } finally {
            logger.removeHandler(capture);
        }
        TestNodes.awaitWorkers(node.router(), 1, 1);
        long capacity = node.decodeWorkers().get(0).descriptor().load().kvBytesCapacity();
        assertTrue(capacity > 0 && capacity < 1 << 20, "lowered into a 1 MiB budget: " + capacity);
        assertTrue(
                warnings.stream()
                        .anyMatch(w ->
                                w.contains("worker.kv-capacity-bytes 4294967296") && w.contains(" " + capacity + " ")),
                "a WARN names the configured capacity and the share: " + warnings);

        // Prompt 0 is used again after 1 to 5: least recently used, 1 goes before it.
        List<long[]> prompts = send(0, 1, 2, 3, 4, 5, 0, 6, 7);
        String prefill = node.prefillWorkers().get(0).descriptor().workerId();
        String decode = node.decodeWorkers().get(0).descriptor().workerId();
        System.gc(); // the counter must outlive a collection (it held its supplier weakly and froze at 0)
        double evictions = node.metrics()
                .registry()
                .get("tandem.kv.cache.evictions")
                .tag("worker", decode)
                .functionCounter()
                .count();
        assertTrue(
                evictions > 0,
                "the decode worker evicted kept blocks: " + evictions + ", capacity " + capacity + ", kept "
                        + snapshot(decode).size() + " blocks");
        double kept = node.metrics()
                .registry()
                .get("tandem.kv.cache.bytes")
                .tag("worker", decode)
                .gauge()
                .value();
        assertTrue(kept > 0 && kept <= capacity, kept + " bytes kept of " + capacity);
        assertTrue(node.kvPool().reused() > 0, "evicted and freed blocks were handed out again");
        Set<Long> held = snapshot(decode);
        for (long h : prompts.get(0)) {
            assertTrue(held.contains(h), "prompt 0, used again, is still held");
        }
        assertTrue(!held.contains(prompts.get(1)[0]), "prompt 1, the least recently used, was evicted");
        assertIndexMatches(prefill, decode, prompts);
    }

    /**
     * Sends each prompt, in order (one at a time), and returns each one's block hashes. Each answer is the one
     * a single process computes: the blocks evicted, freed and handed out again by the node's pool never
     * carry one sequence's K/V into another's.
     */
    private List<long[]> send(int... order) {
        int blockSize = node.engine().kvLayout().blockSize();
        HttpTestClient http = new HttpTestClient(node.router().httpPort());
        LocalGenerator local = new LocalGenerator(node.engine());
        List<long[]> prompts = new ArrayList<>();
        for (int i = 0; i < PROMPTS; i++) {
            int[] tokens = node.engine().tokenizer().encode(prompt(i), true);
            assertTrue(tokens.length >= 4 * blockSize, tokens.length + " tokens");
            prompts.add(BlockHashes.of(node.engine().info().fingerprint(), blockSize, tokens));
        }
        for (int i : order) {
            HttpResponse<String> r = http.post(
                    "/v1/completions",
                    new JsonObject()
                            .put("prompt", prompt(i))
                            .put("max_tokens", 4)
                            .put("temperature", 0)
                            .encode());
            assertEquals(200, r.statusCode(), r.body());
            int[] prompt = node.engine().tokenizer().encode(prompt(i), true);
            assertArrayEquals(
                    local.generate(prompt, SamplingParams.GREEDY, 4, new int[0]).tokens(),
                    HttpTestClient.tokenIds(r),
                    "prompt " + i);
        }
        return prompts;
    }

    private static String prompt(int i) {
        return "Prompt " + i + " of a run that overflows the prefill worker's small prefix cache, "
                + "so its oldest blocks are evicted while the router keeps its index.";
    }

    private void assertIndexMatches(String prefill, String decode, List<long[]> prompts) {
        TestNodes.awaitTrue(
                () -> matches(prefill, prompts) && matches(decode, prompts),
                "the index to name each worker's leading blocks as its snapshot does");
        long pairs = snapshot(prefill).size() + snapshot(decode).size();
        assertEquals(pairs, onRouter(() -> node.router().prefixIndex().entries()), "no other block→worker pair");
    }

    /** For every prompt, the leading blocks the index names on the worker equal those its snapshot holds. */
    private boolean matches(String worker, List<long[]> prompts) {
        Set<Long> held = snapshot(worker);
        for (long[] hashes : prompts) {
            int leading = 0;
            while (leading < hashes.length && held.contains(hashes[leading])) {
                leading++;
            }
            int expected = leading;
            if (onRouter(() -> node.router().prefixIndex().leadingBlocks(worker, hashes)) != expected) {
                return false;
            }
        }
        return true;
    }

    private Set<Long> snapshot(String worker) {
        try {
            JsonObject body = node.vertx()
                    .eventBus()
                    .<JsonObject>request(Addresses.kvSnapshot(worker), new JsonObject())
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(5, TimeUnit.SECONDS)
                    .body();
            Set<Long> out = new HashSet<>();
            for (long h : KvCacheSnapshot.CODEC.decode(body).blocks()) {
                out.add(h);
            }
            return out;
        } catch (Exception e) {
            throw new AssertionError("snapshot of " + worker, e);
        }
    }

    /** The index is only read on the router's event loop. */
    private <T> T onRouter(java.util.function.Supplier<T> read) {
        CompletableFuture<T> out = new CompletableFuture<>();
        node.router().context().runOnContext(v -> out.complete(read.get()));
        return out.join();
    }
}
