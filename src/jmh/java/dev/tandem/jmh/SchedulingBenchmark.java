package dev.tandem.jmh;

import dev.tandem.cluster.PrefixIndex;
import dev.tandem.config.TandemConfig;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.BlockHashes;
import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.KvCacheEvents;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import dev.tandem.router.PairScheduler;
import dev.tandem.router.scheduling.SchedulingObserver;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One scheduling decision of the {@code default} policy, whole: the prompt's block hashes, the prefix
 * index's answer for every worker, both profiles' filters and scorers, the pair. Workers are half prefill,
 * half decode, each caching a different part of a pool of 1,024-token conversations in a real
 * {@link PrefixIndex} (fed through the event bus as workers feed it). Sampled, so JMH reports percentiles.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class SchedulingBenchmark {
    private static final int BLOCK = 16;
    private static final int PROMPTS = 64;
    private static final long FINGERPRINT = 7;

    @Param({"8", "64", "512"})
    int workers;

    private Vertx vertx;
    private PairScheduler scheduler;
    private final List<int[]> prompts = new ArrayList<>();
    private final List<WorkerView> prefill = new ArrayList<>();
    private final List<WorkerView> decode = new ArrayList<>();
    private int next;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        Random random = new Random(42);
        for (int p = 0; p < PROMPTS; p++) {
            int[] prompt = new int[1024];
            for (int i = 0; i < prompt.length; i++) {
                prompt[i] = i < 256 ? i % 250 : random.nextInt(32000); // a shared system prompt, then its own
            }
            prompts.add(prompt);
        }
        vertx = Vertx.vertx();
        PrefixIndex index = new PrefixIndex(vertx, vertx.getOrCreateContext(), Long.MAX_VALUE, 0.5);
        index.start().await();
        for (int w = 0; w < workers; w++) {
            WorkerRole role = w % 2 == 0 ? WorkerRole.PREFILL : WorkerRole.DECODE;
            String id = role.wireName() + "-" + w;
            WorkerView view = new WorkerView(
                    new WorkerDescriptor(
                            id, role, "m", FINGERPRINT, "n", 64, false, WorkerLoad.IDLE, new CacheSpec(BLOCK, true)),
                    random.nextInt(8),
                    random.nextInt(4096));
            (role == WorkerRole.PREFILL ? prefill : decode).add(view);
            // Each worker holds a few conversations, some whole, some only their leading blocks.
            List<Long> stored = new ArrayList<>();
            for (int k = 0; k < 4; k++) {
                long[] hashes = BlockHashes.of(FINGERPRINT, BLOCK, prompts.get(random.nextInt(PROMPTS)));
                int keep = 1 + random.nextInt(hashes.length);
                for (int i = 0; i < keep; i++) {
                    stored.add(hashes[i]);
                }
            }
            long[] blocks = stored.stream().mapToLong(Long::longValue).toArray();
            vertx.eventBus()
                    .publish(
                            Addresses.KV_EVENTS,
                            KvCacheEvents.CODEC.encode(
                                    new KvCacheEvents(id, 1, System.currentTimeMillis(), blocks, new long[0])));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (index.workers() < workers && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        if (index.workers() < workers) {
            throw new IllegalStateException("the index has " + index.workers() + " of " + workers + " workers");
        }
        scheduler = PairScheduler.forSettings(
                TandemConfig.defaults().router(),
                role -> role == WorkerRole.PREFILL ? prefill : decode,
                SchedulingObserver.NONE,
                index::leadingBlocks);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        vertx.close().await();
    }

    @Benchmark
    public PairScheduler.Choice decide() {
        int[] prompt = prompts.get(next++ & (PROMPTS - 1));
        return scheduler.choose(null, null, prompt, Set.of());
    }
}
