package dev.tandem.router;

import dev.tandem.config.RouterSettings;
import dev.tandem.config.SchedulingPolicy;
import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import dev.tandem.router.flow.Saturation;
import dev.tandem.router.scheduling.PrefillRace;
import dev.tandem.router.scheduling.RoutedPrefixTrees;
import dev.tandem.router.scheduling.RoutedPrefixes;
import dev.tandem.router.scheduling.SchedulingObserver;
import dev.tandem.router.scheduling.SchedulingPlugins;
import dev.tandem.router.scheduling.SchedulingProfile;
import dev.tandem.router.scheduling.SchedulingRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Where a request's workers are chosen: the decode worker first (the decode profile: session affinity,
 * cached prefix, load), then who prefills — the decode worker itself when it holds the prompt's prefix
 * and at most {@code localPrefillMaxTokens} are left to compute (conditional disaggregation: no KV
 * moves), else a prefill worker that can feed it (the prefill profile: cached prefix, queue). Both
 * profiles see the same {@link WorkerView} snapshot and the prompt's cached blocks per worker, and leave
 * out the workers that failed the request; a decode worker is only chosen where some prefill worker
 * shares its model fingerprint.
 *
 * <p>Under a policy whose prefixes are {@link SchedulingPolicy.PrefixSource#ROUTED routed} ({@code
 * cache-aware}, SGLang's baseline), each profile remembers what this router routed where (its stateful
 * {@link RoutedPrefixes} plugin, told of every pair taken) and the scheduler reads no prefix index: no
 * local prefill, no incremental transfer (the decode worker is sent the whole KV). Workers still reuse
 * what they hold; the router just does not know it.
 *
 * <p>Loop only (the round-robin ticks and the stateful plugins' state are plain fields).
 */
public final class PairScheduler {

    /**
     * The chosen pair, or which role had nobody to offer. {@code decodeCachedBlocks}: what the decode
     * worker holds of the prompt ({@link PrefillRequest#NO_DECODE_CACHE} when it announces no cache);
     * {@code prefillCachedBlocks}: what the prefill worker does; {@code local}: the decode worker
     * prefills itself.
     */
    public record Choice(
            String prefillWorker,
            String decodeWorker,
            String missingRole,
            int decodeCachedBlocks,
            int prefillCachedBlocks,
            int blockSize,
            boolean local) {

        static Choice missing(String role) {
            return new Choice(null, null, role, PrefillRequest.NO_DECODE_CACHE, 0, 0, false);
        }

        /** The decode worker prefills the prompt's uncached rest itself, on the blocks it holds. */
        static Choice local(WorkerView decode, PromptPrefixes held) {
            int cached = held.cached(decode.id());
            return new Choice(
                    decode.id(),
                    decode.id(),
                    null,
                    cached,
                    cached,
                    decode.worker().cache().blockSize(),
                    true);
        }

        /** A prefill worker computes the prompt and ships its KV to the decode worker; what each holds from {@code held}. */
        static Choice split(WorkerView prefill, WorkerView decode, PromptPrefixes held) {
            CacheSpec prefillSpec = prefill.worker().cache();
            return new Choice(
                    prefill.id(),
                    decode.id(),
                    null,
                    decodeCached(decode, held),
                    held.cached(prefill.id()),
                    prefillSpec == null ? 0 : prefillSpec.blockSize(),
                    false);
        }

        /** What the decode worker holds of the prompt, or {@link PrefillRequest#NO_DECODE_CACHE} when it announces no cache. */
        static int decodeCached(WorkerView decode, PromptPrefixes held) {
            return decode.worker().cache() == null ? PrefillRequest.NO_DECODE_CACHE : held.cached(decode.id());
        }
    }

    private final Function<WorkerRole, List<WorkerView>> workers;
    private final SchedulingProfile prefillProfile;
    private final SchedulingProfile decodeProfile;
    private final SchedulingObserver observer;
    private final PrefixLookup prefixes;
    private final int localPrefillMaxTokens;
    private final SchedulingPolicy.LocalPrefill localPrefill;
    private long prefillTick;
    private long decodeTick;

    /** No prefix index, no local prefill. */
    public PairScheduler(
            Function<WorkerRole, List<WorkerView>> workers,
            SchedulingProfile prefillProfile,
            SchedulingProfile decodeProfile,
            SchedulingObserver observer) {
        this(workers, prefillProfile, decodeProfile, observer, PrefixLookup.NONE, 0);
    }

    /**
     * @param workers               the registered workers of a role with their load (a snapshot per call)
     * @param prefixes              the prefix index: which worker holds how many of a prompt's leading blocks
     * @param localPrefillMaxTokens the most uncached prompt tokens a decode worker prefills itself (0: never)
     */
    public PairScheduler(
            Function<WorkerRole, List<WorkerView>> workers,
            SchedulingProfile prefillProfile,
            SchedulingProfile decodeProfile,
            SchedulingObserver observer,
            PrefixLookup prefixes,
            int localPrefillMaxTokens) {
        this(
                workers,
                prefillProfile,
                decodeProfile,
                observer,
                prefixes,
                localPrefillMaxTokens,
                SchedulingPolicy.LocalPrefill.UP_TO_MAX);
    }

    /** @param localPrefill when a decode worker within {@code localPrefillMaxTokens} prefills itself */
    public PairScheduler(
            Function<WorkerRole, List<WorkerView>> workers,
            SchedulingProfile prefillProfile,
            SchedulingProfile decodeProfile,
            SchedulingObserver observer,
            PrefixLookup prefixes,
            int localPrefillMaxTokens,
            SchedulingPolicy.LocalPrefill localPrefill) {
        this.workers = workers;
        this.prefillProfile = prefillProfile;
        this.decodeProfile = decodeProfile;
        this.observer = observer;
        this.prefixes = prefixes;
        this.localPrefillMaxTokens = localPrefillMaxTokens;
        this.localPrefill = localPrefill;
    }

    /**
     * The scheduler a router's settings describe: its profiles, and what its policy learns prefixes from —
     * {@code index} and local prefill up to {@code router.local-prefill-max-tokens}, or (routed policies)
     * each profile's own record of what it routed where, bounded by the pool's {@code cache-aware} picker's
     * {@code max-tree-blocks}.
     */
    public static PairScheduler forSettings(
            RouterSettings settings,
            Function<WorkerRole, List<WorkerView>> workers,
            SchedulingObserver observer,
            PrefixLookup index) {
        return forSettings(settings, workers, observer, index, RoutedPrefixTrees.Allowance.unbounded());
    }

    /** As above, with the routed-prefix trees (if any) also bounded by {@code trees}, shared across models. */
    public static PairScheduler forSettings(
            RouterSettings settings,
            Function<WorkerRole, List<WorkerView>> workers,
            SchedulingObserver observer,
            PrefixLookup index,
            RoutedPrefixTrees.Allowance trees) {
        SchedulingPolicy policy = settings.schedulingPolicy();
        SchedulingPolicy.PrefixSource source = policy.prefixes();
        return new PairScheduler(
                workers,
                SchedulingPlugins.profile("prefill", settings.prefill(), source, trees),
                SchedulingPlugins.profile("decode", settings.decode(), source, trees),
                observer,
                source == SchedulingPolicy.PrefixSource.INDEX ? index : PrefixLookup.NONE,
                policy.localPrefill().allowed() ? settings.localPrefillMaxTokens() : 0,
                policy.localPrefill());
    }

    /** A worker left the registry: the profiles' stateful plugins forget it. Loop only. */
    public void forgetWorker(String workerId) {
        prefillProfile.forgetWorker(workerId);
        decodeProfile.forgetWorker(workerId);
    }

    /** The model is no longer served: the profiles' stateful plugins give back what they hold. Loop only. */
    public void close() {
        prefillProfile.close();
        decodeProfile.close();
    }

    /** The profile that chooses {@code role}'s worker. */
    public SchedulingProfile profile(WorkerRole role) {
        return role == WorkerRole.PREFILL ? prefillProfile : decodeProfile;
    }

    public Choice choose(String sessionKey, String affinityWorker, int[] prompt, Set<String> avoid) {
        // One snapshot: the registry may change under us (it is fed by Hazelcast threads).
        List<WorkerView> prefillWorkers = workers.apply(WorkerRole.PREFILL);
        List<WorkerView> decodeWorkers = workers.apply(WorkerRole.DECODE);
        List<WorkerView> all = new ArrayList<>(prefillWorkers);
        all.addAll(decodeWorkers);
        // What the workers hold, as far as this router knows: what the profiles see, and what decides local
        // prefill and incremental transfer.
        PromptPrefixes cached = PromptPrefixes.of(prompt, all, prefixes);
        // The fingerprints some prefill worker can feed (engines of different kinds may serve one model).
        Set<Long> feedable = new HashSet<>();
        for (WorkerView p : prefillWorkers) {
            if (!avoid.contains(p.id())) {
                feedable.add(p.modelFingerprint());
            }
        }
        // A fingerprint whose prefill workers the profile turns down (all draining, say) is dropped and the
        // choice made again among the others; bounded by the number of fingerprints.
        while (true) {
            SchedulingRequest decodeRequest =
                    request(sessionKey, affinityWorker, prompt, decodeTick++, avoid, feedable, cached);
            Optional<WorkerView> decode = decodeProfile.choose(decodeRequest, decodeWorkers, observer);
            if (decode.isEmpty()) {
                boolean unfed = decodeWorkers.stream().noneMatch(d -> feedable.contains(d.modelFingerprint()));
                return Choice.missing(unfed && !decodeWorkers.isEmpty() ? "prefill" : "decode");
            }
            WorkerView d = decode.get();
            boolean local = prefillsLocally(d, cached, prompt.length);
            if (local && localPrefill != SchedulingPolicy.LocalPrefill.WHEN_FASTER) {
                decodeProfile.onPicked(decodeRequest, d);
                return Choice.local(d, cached);
            }
            SchedulingRequest prefillRequest =
                    request(sessionKey, null, prompt, prefillTick++, avoid, Set.of(d.modelFingerprint()), cached);
            Optional<WorkerView> prefill = prefillProfile.choose(prefillRequest, prefillWorkers, observer);
            if (local
                    && (prefill.isEmpty()
                            || PrefillRace.localFirst(prefillRequest, d, prefill.get(), prefillWorkers))) {
                decodeProfile.onPicked(decodeRequest, d);
                return Choice.local(d, cached);
            }
            if (prefill.isPresent()) {
                prefillProfile.onPicked(prefillRequest, prefill.get());
                decodeProfile.onPicked(decodeRequest, d);
                return Choice.split(prefill.get(), d, cached);
            }
            feedable.remove(d.modelFingerprint());
        }
    }

    /** The model's registered workers of a role with their load, now. */
    public List<WorkerView> workers(WorkerRole role) {
        return workers.apply(role);
    }

    /**
     * The prefill workers that cannot give {@code prompt}'s first token within {@code budgetMs}: a worker's
     * predicted time is its queued prompt tokens ({@link Saturation#queuedPrefillTokens}) plus the prompt's
     * tokens it does not cache, over the prefill rate it measures itself. A worker that reports no rate yet
     * cannot be predicted and is never among them. {@code bestMs}: the lowest prediction (-1: none).
     */
    public SloMisses sloMisses(int[] prompt, double budgetMs) {
        List<WorkerView> prefill = workers.apply(WorkerRole.PREFILL);
        PromptPrefixes cached = PromptPrefixes.of(prompt, prefill, prefixes);
        Set<String> misses = new HashSet<>();
        int candidates = 0;
        double best = Double.MAX_VALUE;
        for (WorkerView w : prefill) {
            if (w.draining()) {
                continue;
            }
            candidates++;
            double rate = w.load().prefillTokensPerSecond();
            if (rate <= 0) {
                best = Math.min(best, 0);
                continue;
            }
            int blockSize = w.worker().cache() == null ? 0 : w.worker().cache().blockSize();
            long uncached = Math.max(1, prompt.length - (long) cached.cached(w.id()) * blockSize);
            double ms = (Saturation.queuedPrefillTokens(w) + uncached) * 1000.0 / rate;
            best = Math.min(best, ms);
            if (ms > budgetMs) {
                misses.add(w.id());
            }
        }
        return new SloMisses(
                misses, candidates > 0 && misses.size() == candidates, best == Double.MAX_VALUE ? -1 : (long) best);
    }

    /** What {@link #sloMisses} found: the workers to avoid, whether that is all of them, the best prediction. */
    public record SloMisses(Set<String> workers, boolean all, long bestMs) {}

    /** Whether the decode worker holds the prompt's prefix and little enough is left to prefill it itself. */
    private boolean prefillsLocally(WorkerView decode, PromptPrefixes cached, int promptTokens) {
        CacheSpec spec = decode.worker().cache();
        int decodeCached = Choice.decodeCached(decode, cached);
        return spec != null
                && spec.localPrefill()
                && decodeCached > 0
                && promptTokens - decodeCached * spec.blockSize() <= localPrefillMaxTokens;
    }

    private static SchedulingRequest request(
            String sessionKey,
            String affinityWorker,
            int[] prompt,
            long tick,
            Set<String> avoid,
            Set<Long> fingerprints,
            PromptPrefixes cached) {
        return new SchedulingRequest(
                sessionKey,
                affinityWorker,
                prompt.length,
                tick,
                avoid,
                fingerprints,
                cached.promptBlocks(),
                cached.cachedBlocks(),
                Map.of(),
                cached.hashes());
    }
}
