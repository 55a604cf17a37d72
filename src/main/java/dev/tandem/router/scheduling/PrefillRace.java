package dev.tandem.router.scheduling;

import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * Local prefill against the prefill pool, in predicted time: a decode worker that holds the prompt's prefix
 * prefills the rest itself when that is no slower than the prefill worker the pool chose plus the KV
 * transfer to the decode worker. Each side is its queued prompt tokens plus the tokens it would compute,
 * at its measured rate ({@link PrefillTime}: the prefill worker's as its pool reads it, the decode worker's
 * its own, measured start to finish, so that the decode steps its chunked local prefills run between are
 * in it). The transfer is the KV the decode worker does not hold, at the prefill worker's measured
 * transfer rate (free when it reports none). Pure.
 */
public final class PrefillRace {

    private PrefillRace() {}

    /** Whether {@code decode} prefilling itself is predicted no slower than {@code prefill} plus the transfer. */
    public static boolean localFirst(
            SchedulingRequest request, WorkerView decode, WorkerView prefill, List<WorkerView> prefillPool) {
        double median = PrefillTime.medianRate(prefillPool);
        return localSeconds(request, decode, median) <= splitSeconds(request, decode, prefill, median);
    }

    /**
     * Predicted seconds until the decode worker has the prompt's KV by prefilling it itself; {@code median}:
     * the prefill pool's median rate, for a decode worker that reports none.
     */
    static double localSeconds(SchedulingRequest request, WorkerView decode, double median) {
        // Its own rate: local prefill interleaves decode steps, so it is rightly slower than the pool's.
        return PrefillTime.firstTokenSeconds(request, decode, PrefillTime.ownRate(decode, median));
    }

    /** Predicted seconds until the decode worker has the prompt's KV from {@code prefill}, in a pool of {@code median}. */
    static double splitSeconds(SchedulingRequest request, WorkerView decode, WorkerView prefill, double median) {
        return PrefillTime.firstTokenSeconds(request, prefill, PrefillTime.rate(prefill, median))
                + transferSeconds(request, decode, prefill);
    }

    /** The KV the decode worker lacks, at the prefill worker's measured transfer rate; 0 when either is unknown. */
    static double transferSeconds(SchedulingRequest request, WorkerView decode, WorkerView prefill) {
        CacheSpec cache = decode.worker().cache();
        double bytesPerSecond = prefill.load().kvBytesPerSecond();
        if (cache == null || cache.blockBytes() <= 0 || bytesPerSecond <= 0) {
            return 0;
        }
        long missing = PrefillTime.uncachedTokens(request, decode);
        return missing * ((double) cache.blockBytes() / cache.blockSize()) / bytesPerSecond;
    }
}
