package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * The time until this prompt's first token on a prefill worker, plus what recomputing a cached prefix
 * there costs the requests after it (lower is better). The worker's queued prompt tokens and this prompt's
 * tokens it does not cache are turned into seconds with the worker's own measured prefill rate ({@link
 * PrefillTime}), so a faster worker, or one whose queue is shorter in time rather than in tokens, wins;
 * then the compute this choice adds is counted {@link #RECOMPUTE_WEIGHT} more times: a prefix recomputed
 * elsewhere is capacity taken from every later prompt, which a greedy least-TTFT choice does not see and
 * which, on the traces of benchmarks.md, cost both hits and tail latency.
 *
 * <p>A long prompt queued on a worker counts its full compute time there, so a short prompt goes where it
 * does not wait behind one whenever some worker is free sooner: the size-aware placement of design.md.
 */
public final class PredictedTtftScorer extends LowerIsBetterScorer {
    /**
     * Extra weight of this prompt's own compute: 5 makes the uncached tokens count 6 × in all. At 4 × (the
     * token-counting default's weight) the Mooncake conversation trace stayed at 94% of its ideal hit rate
     * (benchmarks.md, "What the benchmark changed in scheduling").
     */
    static final double RECOMPUTE_WEIGHT = 5;

    /**
     * The bound of that trade: a worker whose first token is predicted later than this many times the
     * soonest, and {@link #TRADE_SLACK_SECONDS} later, loses to every worker within it, whatever its cache
     * saves. On the Mooncake conversation trace a 41,000-token turn went to the holder of its 19,000-token
     * prefix just after that worker took an 88,000-token prompt, and waited 11.8 s (benchmarks.md).
     */
    static final double TRADE_FACTOR = 2;

    /**
     * The extra wait the bound allows at least. With 1 s the conversation trace kept 91% of its ideal hit
     * rate, with 8 s 96%: turns wait a few seconds behind a long prompt at their prefix's holder, which
     * costs them less than recomputing it costs the prompts after them.
     */
    static final double TRADE_SLACK_SECONDS = 8;

    @Override
    public String name() {
        return "predicted-ttft";
    }

    /** Predicted seconds to the first token on {@code worker} plus the weighted compute, at {@code rate}. */
    static double cost(SchedulingRequest request, WorkerView worker, double rate) {
        return PrefillTime.firstTokenSeconds(request, worker, rate) + ownCompute(request, worker, rate);
    }

    /** The weighted compute of this prompt on {@code worker}, in seconds at {@code rate}. */
    private static double ownCompute(SchedulingRequest request, WorkerView worker, double rate) {
        return RECOMPUTE_WEIGHT * PrefillTime.uncachedTokens(request, worker) / rate;
    }

    @Override
    double value(SchedulingRequest request, WorkerView worker) {
        return cost(request, worker, PrefillTime.ownRate(worker, 1));
    }

    /**
     * Each candidate's cost; those past the bound of the trade rank after all others, by their first token
     * (a pool without rates counts tokens, and the slack is then one token).
     */
    @Override
    double[] values(SchedulingRequest request, List<WorkerView> candidates) {
        double median = PrefillTime.medianRate(candidates);
        double[] out = new double[candidates.size()];
        double[] ttft = new double[out.length];
        double soonest = Double.POSITIVE_INFINITY;
        for (int i = 0; i < out.length; i++) {
            WorkerView w = candidates.get(i);
            double rate = PrefillTime.rate(w, median);
            ttft[i] = PrefillTime.firstTokenSeconds(request, w, rate);
            out[i] = ttft[i] + ownCompute(request, w, rate);
            soonest = Math.min(soonest, ttft[i]);
        }
        double bound = Math.max(TRADE_FACTOR * soonest, soonest + TRADE_SLACK_SECONDS);
        double worstWithin = 0;
        for (int i = 0; i < out.length; i++) {
            if (ttft[i] <= bound) {
                worstWithin = Math.max(worstWithin, out[i]);
            }
        }
        for (int i = 0; i < out.length; i++) {
            if (ttft[i] > bound) {
                out[i] = worstWithin + ttft[i];
            }
        }
        return out;
    }
}
