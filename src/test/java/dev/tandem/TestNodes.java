package dev.tandem;

import dev.tandem.cluster.LoopbackClusterPorts;
import dev.tandem.config.ClusterSettings;
import dev.tandem.config.MemorySettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.RouterVerticle;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.BlockHashes;
import dev.tandem.protocol.WorkerRole;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/** Builds loopback Tandem nodes for tests: a random cluster name per test class, HTTP on a free port. */
public final class TestNodes {
    private TestNodes() {}

    public static TandemConfig config() {
        TandemConfig defaults = TandemConfig.defaults();
        String name = "tandem-test-" + UUID.randomUUID();
        // A free base port and an explicit seed address: joining "127.0.0.1" alone probes only 5701-5703,
        // which other builds on the machine may hold, splitting a test's members into separate clusters.
        // Below the ephemeral range, so that no dial to a member that left can connect to itself.
        int port = LoopbackClusterPorts.base(32);
        // No bridge unless a test asks for one: the default port 7000 would clash between nodes and builds.
        // No KV reserved at start: a test JVM runs many nodes, each of which would take a share of its heap.
        return TestSettings.withMemory(
                        defaults.withCluster(
                                new ClusterSettings(name, "127.0.0.1", port, List.of("127.0.0.1:" + port))),
                        new MemorySettings(defaults.memory().heapFraction(), 0, false))
                .withHttp(defaults.http().withPort(0))
                .withBridge(defaults.bridge().withTcpPort(-1));
    }

    /** The text a stream must carry for generated tokens after a prompt (incremental decode plus flush). */
    public static String expectedText(dev.tandem.engine.Engine engine, int[] prompt, int[] generated) {
        dev.tandem.engine.tokenizer.TextStreamDecoder decoder =
                new dev.tandem.engine.tokenizer.TextStreamDecoder(engine.tokenizer(), prompt[prompt.length - 1]);
        StringBuilder sb = new StringBuilder();
        for (int t : generated) {
            sb.append(decoder.push(t));
        }
        return sb.append(decoder.flush()).toString();
    }

    /** An embedded node (router and workers in one JVM) whose router already sees all its workers. */
    public static TandemNode startEmbedded(TandemConfig config, int prefill, int decode) {
        TandemNode node = TandemNode.start(config, TandemNode.Plan.embedded(prefill, decode));
        awaitWorkers(node.router(), prefill, decode);
        return node;
    }

    /** Waits until the router sees the given number of workers of each role. */
    public static void awaitWorkers(RouterVerticle router, int prefill, int decode) {
        awaitTrue(
                () -> router.directory().workers(WorkerRole.PREFILL).size() == prefill
                        && router.directory().workers(WorkerRole.DECODE).size() == decode,
                Duration.ofSeconds(30),
                "router to see " + prefill + " prefill and " + decode + " decode workers");
    }

    /**
     * Waits until the node's router has learnt from the workers' KV events that some worker holds the
     * prompt's first {@code blocks} blocks (the index is only read on the router's event loop).
     */
    public static void awaitIndexed(TandemNode node, int blockSize, int[] prompt, int blocks) {
        awaitIndexed(node, blockSize, prompt, blocks, "");
    }

    /** As above, for a worker whose id starts with {@code workerPrefix} (e.g. "decode-"). */
    public static void awaitIndexed(TandemNode node, int blockSize, int[] prompt, int blocks, String workerPrefix) {
        long[] hashes = BlockHashes.of(node.engine().info().fingerprint(), blockSize, prompt);
        awaitTrue(
                () -> {
                    CompletableFuture<Map<String, Integer>> held = new CompletableFuture<>();
                    node.router()
                            .context()
                            .runOnContext(v ->
                                    held.complete(node.router().prefixIndex().leadingBlocks(hashes)));
                    return held.join().entrySet().stream()
                            .anyMatch(e -> e.getKey().startsWith(workerPrefix) && e.getValue() >= blocks);
                },
                "the router's prefix index to learn that a worker '" + workerPrefix + "…' holds the prompt's first "
                        + blocks + " blocks");
    }

    /** Waits up to 15 s. */
    public static void awaitTrue(BooleanSupplier condition, String what) {
        awaitTrue(condition, Duration.ofSeconds(15), what);
    }

    public static void awaitTrue(BooleanSupplier condition, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what);
            }
        }
    }
}
