package dev.tandem.router.flow;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * Whether a model's pools can take one more request now — llm-d's "saturation detector": the prefill pool
 * is saturated when every prefill worker that takes work has at least {@code maxQueuedPrefillTokens} prompt
 * tokens in flight (the routers' count: every prompt a worker holds was sent by a router, and the count
 * drops the moment its prefill is done, where the worker's own report lags by up to a heartbeat and held
 * requests back that long — quiet tenants' TTFT p50 was 472 ms instead of 70 on the noisy-neighbour run), or
 * as many as it needs {@code maxQueuedPrefillMs} to get through at the rate it measures itself;
 * the decode pool when every decode worker is at its batch limit (the sequences the routers have on it) or uses {@code maxKvFraction} of its KV
 * memory. A saturated model's requests wait in the router's {@link FairQueue} instead of piling onto
 * workers' queues, where nobody could reorder them. Pure.
 */
public final class Saturation {
    private final long maxQueuedPrefillTokens;
    private final long maxQueuedPrefillMs;
    private final double maxKvFraction;

    /**
     * @param maxQueuedPrefillMs the same bound in time, for workers that report their prefill rate: queued
     *                           tokens over the rate (0: tokens only)
     */
    public Saturation(long maxQueuedPrefillTokens, long maxQueuedPrefillMs, double maxKvFraction) {
        this.maxQueuedPrefillTokens = maxQueuedPrefillTokens;
        this.maxQueuedPrefillMs = maxQueuedPrefillMs;
        this.maxKvFraction = maxKvFraction;
    }

    /** True when either pool has no worker with room; an empty pool is not saturated (scheduling says 503). */
    public boolean saturated(List<WorkerView> prefill, List<WorkerView> decode) {
        return allFull(prefill, true) || allFull(decode, false);
    }

    /**
     * The workers without room, of both pools: a request let through goes to one of the others. Scheduling
     * alone would not see it: its scorers read the larger of a worker's report and the routers' count, and a
     * report a heartbeat old made an idle worker look busy, so prompts piled onto a busy one (worker queue
     * 105 ms on the noisy-neighbour run).
     */
    public java.util.Set<String> full(List<WorkerView> prefill, List<WorkerView> decode) {
        java.util.Set<String> out = new java.util.HashSet<>();
        for (WorkerView w : prefill) {
            if (prefillFull(w)) {
                out.add(w.id());
            }
        }
        for (WorkerView w : decode) {
            if (decodeFull(w)) {
                out.add(w.id());
            }
        }
        return out;
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
        long queued = w.inFlightPrefillTokens();
        double rate = w.load().prefillTokensPerSecond();
        if (queued >= maxQueuedPrefillTokens) {
            return true;
        }
        if (maxQueuedPrefillMs <= 0) {
            return false;
        }
        if (rate > 0) {
            return queued * 1000.0 / rate >= maxQueuedPrefillMs;
        }
        // No rate measured yet (a worker that just started, or one that does not report it): as many prompts as
        // it computes at once. Without this, a cold start let 16k tokens pile onto every worker before the first
        // measurement, and a quiet tenant's first requests waited behind them (TTFT 450-900 ms, solo 60).
        return w.worker().maxBatch() > 0 && w.inFlight() >= w.worker().maxBatch();
    }

    private boolean decodeFull(WorkerView w) {
        int sequences = w.inFlight(); // the routers' count, fresh, as for prefill
        if (w.worker().maxBatch() > 0 && sequences >= w.worker().maxBatch()) {
            return true;
        }
        long capacity = w.load().kvBytesCapacity();
        return capacity > 0 && w.load().kvBytesUsed() >= maxKvFraction * capacity;
    }
}
