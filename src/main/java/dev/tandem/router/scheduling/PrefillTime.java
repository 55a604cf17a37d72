package dev.tandem.router.scheduling;

import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * Prefill work turned into time: prompt tokens over the rate a worker measures itself ({@link
 * dev.tandem.protocol.WorkerLoad#prefillTokensPerSecond()}, learned online from its own timers, its
 * engine's expectation until then). A worker that reports no rate is taken at the pool's mean; a pool
 * where none reports one counts tokens as time (rate 1), which ranks workers as the token counts do.
 */
public final class PrefillTime {

    private PrefillTime() {}

    /** The mean rate of the workers that report one; 1 when none does. */
    public static double meanRate(List<WorkerView> workers) {
        double sum = 0;
        int n = 0;
        for (WorkerView w : workers) {
            double r = w.load().prefillTokensPerSecond();
            if (r > 0) {
                sum += r;
                n++;
            }
        }
        return n == 0 ? 1 : sum / n;
    }

    /** {@code worker}'s rate, or {@code fallback} when it reports none. */
    public static double rate(WorkerView worker, double fallback) {
        double r = worker.load().prefillTokensPerSecond();
        return r > 0 ? r : fallback;
    }

    /**
     * The tokens of this prompt {@code worker} would compute: those after the leading blocks it holds, at
     * least the last one (its logits give the first token).
     */
    public static long uncachedTokens(SchedulingRequest request, WorkerView worker) {
        CacheSpec cache = worker.worker().cache();
        long cached = cache == null ? 0 : (long) request.cachedBlocks(worker.id()) * cache.blockSize();
        return Math.max(1, request.promptTokens() - Math.min(cached, request.promptTokens() - 1L));
    }

    /** The prompt tokens ahead of a new one on {@code worker}: see {@link QueuedPrefillTokensScorer}. */
    public static long queuedTokens(WorkerView worker) {
        return QueuedPrefillTokensScorer.queuedPrefillTokens(worker);
    }
}
