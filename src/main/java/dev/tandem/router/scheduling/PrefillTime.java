package dev.tandem.router.scheduling;

import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * Prefill work turned into time: prompt tokens over the rate a worker measures itself ({@link
 * dev.tandem.protocol.WorkerLoad#prefillTokensPerSecond()}, learned online from its own timers, its
 * engine's expectation until then).
 *
 * <p>Within a pool, a worker's rate counts only where it stands out: a rate within {@link #BAND} of the
 * pool's median is taken as the median. Workers of one model on one kind of accelerator measure rates that
 * differ by the prompt sizes they happened to compute (attention grows with the square of a prompt's
 * length: 5,300 against 10,000 tokens/s for 120,000- and 4,000-token prompts on the 70B profile), and
 * reading that noise as speed sent long prompts to queues it thought faster: on the Mooncake conversation
 * trace, waits of 0.6 to 4.5 s before their prefill against 0.2 s when counting tokens (benchmarks.md). A
 * worker on slower or faster hardware is outside the band and keeps its own rate. A worker that reports no
 * rate is taken at the median; a pool where none reports one counts tokens as time (rate 1), which ranks
 * workers as the token counts do.
 */
public final class PrefillTime {

    private PrefillTime() {}

    /** A rate within this factor of the pool's median is the median's. */
    static final double BAND = 1.3;

    /** The median rate of the workers that report one; 1 when none does. */
    public static double medianRate(List<WorkerView> workers) {
        double[] rates = workers.stream()
                .mapToDouble(w -> w.load().prefillTokensPerSecond())
                .filter(r -> r > 0)
                .sorted()
                .toArray();
        if (rates.length == 0) {
            return 1;
        }
        int mid = rates.length / 2;
        return rates.length % 2 == 1 ? rates[mid] : (rates[mid - 1] + rates[mid]) / 2;
    }

    /** {@code worker}'s rate in a pool of median {@code median}: its own only outside {@link #BAND}. */
    public static double rate(WorkerView worker, double median) {
        double r = worker.load().prefillTokensPerSecond();
        return r > 0 && (r > median * BAND || r * BAND < median) ? r : median;
    }

    /** {@code worker}'s own rate, or {@code fallback} when it reports none: for a worker outside the pool. */
    public static double ownRate(WorkerView worker, double fallback) {
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

    /**
     * Predicted seconds to this prompt's first token on {@code worker} at {@code rate}: its queued prompt
     * tokens ({@link QueuedPrefillTokensScorer}) and then this prompt's uncached ones.
     */
    public static double firstTokenSeconds(SchedulingRequest request, WorkerView worker, double rate) {
        return (QueuedPrefillTokensScorer.queuedPrefillTokens(worker) + uncachedTokens(request, worker)) / rate;
    }
}
