package dev.tandem.router.scheduling;

import dev.tandem.config.PickerSettings;
import dev.tandem.protocol.WorkerView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * NVIDIA Dynamo's worker selection, over the weighted scores: at temperature 0 the best score, ties broken
 * by a random draw; above 0 a draw from the softmax of the scores rescaled to [0, 1] — a candidate {@code
 * d} below the best (as a share of best − worst) has weight {@code exp(−d / temperature)}; all equal, each
 * is as likely. Over the {@code kv-block-cost} scorer alone this is Dynamo's {@code softmax_sample} over its
 * logits (ai-dynamo/dynamo, lib/llm/src/kv_router/scheduler.rs).
 *
 * <p>Pure: the draw is a function of the request's tick and the picker's seed (SplitMix64), over the
 * candidates in id order, so the same request, candidates and seed give the same choice.
 */
public final class SoftmaxPicker implements Picker {
    private static final double EPSILON = 1e-9;

    private final double temperature;
    private final long seed;

    public SoftmaxPicker(PickerSettings.Softmax settings) {
        this.temperature = settings.temperature();
        this.seed = settings.seed();
    }

    @Override
    public String name() {
        return PickerSettings.Softmax.PLUGIN;
    }

    @Override
    public WorkerView pick(SchedulingRequest request, List<ScoredWorker> scored) {
        List<ScoredWorker> byId = new ArrayList<>(scored);
        byId.sort(Comparator.comparing(s -> s.worker().id()));
        double best = Double.NEGATIVE_INFINITY;
        double worst = Double.POSITIVE_INFINITY;
        for (ScoredWorker s : byId) {
            best = Math.max(best, s.score());
            worst = Math.min(worst, s.score());
        }
        double[] weights = new double[byId.size()];
        for (int i = 0; i < weights.length; i++) {
            weights[i] = weight(byId.get(i).score(), best, worst);
        }
        return byId.get(sample(weights, draw(request.tick()))).worker();
    }

    /** A candidate's unnormalised probability. */
    private double weight(double score, double best, double worst) {
        if (best - worst <= EPSILON) {
            return 1.0;
        }
        if (temperature == 0) {
            return score >= best - EPSILON ? 1.0 : 0.0;
        }
        return Math.exp(-((best - score) / (best - worst)) / temperature);
    }

    /** The index whose cumulative share of the weights first reaches {@code u} (in [0, 1)). */
    static int sample(double[] weights, double u) {
        double total = 0;
        for (double w : weights) {
            total += w;
        }
        double cumulative = 0;
        for (int i = 0; i < weights.length; i++) {
            cumulative += weights[i] / total;
            if (u < cumulative) {
                return i;
            }
        }
        for (int i = weights.length - 1; i >= 0; i--) {
            if (weights[i] > 0) {
                return i; // rounding left u above the last sum
            }
        }
        return weights.length - 1;
    }

    /** A uniform draw in [0, 1) for this tick: SplitMix64 of seed and tick. */
    double draw(long tick) {
        long z = seed + (tick + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z = z ^ (z >>> 31);
        return (z >>> 11) * 0x1.0p-53;
    }
}
