package dev.tandem.router.scheduling;

import dev.tandem.config.PickerSettings.CacheAware;
import dev.tandem.protocol.WorkerView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * SGLang router's {@code cache_aware} rule, written from its public description (sgl-project/sglang,
 * {@code sgl-model-gateway/src/policies/cache_aware.rs}), as a baseline to compare routing against. Over
 * the candidates the filters left, the scores ignored:
 *
 * <ol>
 *   <li><b>Imbalanced</b> — {@code max - min > balance-abs-threshold} and {@code max > min ×
 *       balance-rel-threshold}, over the routers' requests in flight ({@link WorkerView#inFlight()}): the
 *       least loaded worker.
 *   <li>Else the worker with the longest routed prefix ({@link SchedulingRequest#cachedBlocks}: the
 *       prompt's leading blocks this router routed to it), when that match is strictly more than
 *       {@code cache-threshold} of the prompt's full blocks (ties: fewer in flight).
 *   <li>Else the worker with the smallest routed-prefix tree ({@link SchedulingRequest#routedBlocks}: the
 *       most cache SGLang believes free).
 * </ol>
 *
 * Remaining ties go round-robin by the request's tick over the tied workers in id order. Where SGLang
 * differs: its trees hold characters (a partly matched block counts there; here the match is over whole
 * KV blocks, so a prompt without a full block takes the third branch), and among equal matches it takes
 * the worker that most recently routed that prefix. Pure: the tree sizes and matches come in the request.
 */
public final class CacheAwarePicker implements Picker {
    private final CacheAware settings;

    public CacheAwarePicker(CacheAware settings) {
        this.settings = settings;
    }

    @Override
    public String name() {
        return CacheAware.PLUGIN;
    }

    @Override
    public WorkerView pick(SchedulingRequest request, List<ScoredWorker> scored) {
        List<WorkerView> workers = new ArrayList<>(scored.size());
        for (ScoredWorker s : scored) {
            workers.add(s.worker());
        }
        workers.sort(Comparator.comparing(WorkerView::id));
        if (imbalanced(workers)) {
            return roundRobin(request, fewest(workers, WorkerView::inFlight));
        }
        int bestMatch = 0;
        for (WorkerView w : workers) {
            bestMatch = Math.max(bestMatch, request.cachedBlocks(w.id()));
        }
        if (request.promptBlocks() > 0 && (double) bestMatch / request.promptBlocks() > settings.cacheThreshold()) {
            int best = bestMatch;
            List<WorkerView> matching = workers.stream()
                    .filter(w -> request.cachedBlocks(w.id()) == best)
                    .toList();
            return roundRobin(request, fewest(matching, WorkerView::inFlight));
        }
        return roundRobin(request, fewest(workers, w -> request.routedBlocks(w.id())));
    }

    /** SGLang's test: both the absolute and the relative difference of the loads beyond their thresholds. */
    private boolean imbalanced(List<WorkerView> workers) {
        long max = Long.MIN_VALUE;
        long min = Long.MAX_VALUE;
        for (WorkerView w : workers) {
            max = Math.max(max, w.inFlight());
            min = Math.min(min, w.inFlight());
        }
        return max - min > settings.balanceAbsThreshold() && max > min * settings.balanceRelThreshold();
    }

    /** The workers with the lowest {@code value}, in the given order. */
    private static List<WorkerView> fewest(List<WorkerView> workers, ToLongFunction<WorkerView> value) {
        long least = Long.MAX_VALUE;
        for (WorkerView w : workers) {
            least = Math.min(least, value.applyAsLong(w));
        }
        long l = least;
        return workers.stream().filter(w -> value.applyAsLong(w) == l).toList();
    }

    private static WorkerView roundRobin(SchedulingRequest request, List<WorkerView> tied) {
        return tied.get((int) Math.floorMod(request.tick(), (long) tied.size()));
    }
}
