package dev.tandem.bench.upstream;

import dev.tandem.engine.Pacing;
import dev.tandem.engine.sim.SimProfile;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The prefill side of a sim vLLM instance: one prompt at a time, first come first served (Tandem's sim
 * prefill workers run one too), for the time the profile gives the prompt's tokens past its cached
 * prefix; then the prompt's blocks join the prefix cache (with their KV events) and its KV is kept for
 * the decode instance to pull, as vLLM's NixlConnector keeps it until the remote read or a timeout.
 */
final class SimPrefillEngine implements AutoCloseable {
    /** vLLM frees KV no decode instance came for after {@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT} (480 s). */
    static final long PICKUP_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(480);

    /** What a prefill computed: the prompt's tokens found cached, and its pickup id. */
    record Done(int cachedTokens, String transferId) {}

    private record Job(int[] prompt, Promise<Done> done, long queuedNanos) {}

    private final SimProfile profile;
    private final double timeScale;
    private final SimBlockCache cache;
    private final VllmKvEventPublisher events;
    private final LinkedBlockingQueue<Job> queue = new LinkedBlockingQueue<>();
    private final AtomicInteger waiting = new AtomicInteger();
    private final AtomicLong ids = new AtomicLong();
    /** KV waiting for its decode instance: transfer id → its bytes, and when it expires. */
    private final Map<String, long[]> held = new ConcurrentHashMap<>();

    private final String name;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean computing;

    SimPrefillEngine(
            String name, SimProfile profile, double timeScale, SimBlockCache cache, VllmKvEventPublisher events) {
        this.name = name;
        this.profile = profile;
        this.timeScale = timeScale;
        this.cache = cache;
        this.events = events;
        this.thread = new Thread(this::run, "sim-vllm-prefill-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    Future<Done> prefill(int[] prompt) {
        Promise<Done> done = Promise.promise();
        waiting.incrementAndGet();
        queue.add(new Job(prompt, done, System.nanoTime()));
        return done.future();
    }

    /** The KV of {@code transferId}, taken by a decode instance: its bytes, or -1 when none is held. */
    long pull(String transferId) {
        long[] kv = held.remove(transferId);
        return kv == null ? -1 : kv[0];
    }

    int waiting() {
        return waiting.get();
    }

    int running() {
        return computing ? 1 : 0;
    }

    double cacheUsage() {
        return cache.capacityBlocks() == 0 ? 0 : (double) cache.size() / cache.capacityBlocks();
    }

    private void run() {
        while (running) {
            Job job;
            try {
                job = queue.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            expire();
            if (job == null) {
                continue;
            }
            waiting.decrementAndGet();
            computing = true;
            try {
                int cached = cache.cachedTokens(job.prompt());
                if (cached == job.prompt().length) {
                    cached -= 1; // the last token is always computed, for its logits
                }
                long start = System.nanoTime();
                Pacing.waitUntil(
                        start + (long) (profile.prefillNanos(cached, job.prompt().length) / timeScale), () -> !running);
                events.publish(cache.store(job.prompt()).toArray(new VllmKvEventPublisher.Event[0]));
                String id = name + "-" + ids.incrementAndGet();
                held.put(id, new long[] {(long) job.prompt().length * profile.kvBytesPerToken(), start});
                job.done().complete(new Done(Math.max(0, cached), id));
            } catch (RuntimeException e) {
                job.done().tryFail(e);
            } finally {
                computing = false;
            }
        }
    }

    private void expire() {
        long now = System.nanoTime();
        held.values().removeIf(kv -> now - kv[1] > PICKUP_TIMEOUT_NANOS / timeScale);
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Job job;
        while ((job = queue.poll()) != null) {
            job.done().tryFail("the sim vLLM instance stopped");
        }
    }
}
