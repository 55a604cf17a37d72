package dev.tandem.router.flow;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * Whether a model's pools can take one more request now — llm-d's "saturation detector": the prefill pool
 * is saturated when every prefill worker that takes work has at least {@code maxQueuedPrefillTokens} prompt
 * tokens queued or in flight (the larger of its report and the routers' count, as scheduling reads it);
 * the decode pool when every decode worker is at its batch limit or uses {@code maxKvFraction} of its KV
 * memory. A saturated model's requests wait in the router's {@link FairQueue} instead of piling onto
 * workers' queues, where nobody could reorder them. Pure.
 */
public final class Saturation {
    private final long maxQueuedPrefillTokens;
    private final double maxKvFraction;

    public Saturation(long maxQueuedPrefillTokens, double maxKvFraction) {
        this.maxQueuedPrefillTokens = maxQueuedPrefillTokens;
        this.maxKvFraction = maxKvFraction;
    }

    /** True when either pool has no worker with room; an empty pool is not saturated (scheduling says 503). */
    public boolean saturated(List<WorkerView> prefill, List<WorkerView> decode) {
        return allFull(prefill, true) || allFull(decode, false);
    }

    private boolean allFull(List<WorkerView> pool, boolean prefill) {
        boolean any = false;
        for (WorkerView w : pool) {
            if (w.draining()) {
                continue;
            }
            any = true;
            if (!(prefill ? prefillFull(w) : decodeFull(w))) {
                return false;
            }
        }
        return any;
    }

    /** Prompt tokens a worker has to get through before a new one: its report or the routers' count. */
    public static long queuedPrefillTokens(WorkerView w) {
        return Math.max(w.load().queuedPrefillTokens(), w.inFlightPrefillTokens());
    }

    private boolean prefillFull(WorkerView w) {
        return queuedPrefillTokens(w) >= maxQueuedPrefillTokens;
    }

    private boolean decodeFull(WorkerView w) {
        int sequences = Math.max(w.load().activeSequences(), w.inFlight());
        if (w.worker().maxBatch() > 0 && sequences >= w.worker().maxBatch()) {
            return true;
        }
        long capacity = w.load().kvBytesCapacity();
        return capacity > 0 && w.load().kvBytesUsed() >= maxKvFraction * capacity;
    }
}
