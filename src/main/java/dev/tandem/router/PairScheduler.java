package dev.tandem.router;

import dev.tandem.config.PickerSettings;
import dev.tandem.config.RouterSettings;
import dev.tandem.config.SchedulerSettings;
import dev.tandem.config.SchedulingPolicy;
import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import dev.tandem.router.scheduling.SchedulingObserver;
import dev.tandem.router.scheduling.SchedulingPlugins;
import dev.tandem.router.scheduling.SchedulingProfile;
import dev.tandem.router.scheduling.SchedulingRequest;
import java.util.ArrayList;
import java.util.HashMap;
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
 * cache-aware}, SGLang's baseline), the profiles see instead what this router itself routed where — one
 * {@link RoutedPrefixTrees} per pool, each chosen pair's prompt inserted after the choice — and nothing
 * of the prefix index: no local prefill, no incremental transfer (the decode worker is sent the whole
 * KV). Workers still reuse what they hold; the router just does not know it.
 *
 * <p>Loop only (the round-robin ticks and the trees are plain fields).
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
    }

    private final Function<WorkerRole, List<WorkerView>> workers;
    private final SchedulingProfile prefillProfile;
    private final SchedulingProfile decodeProfile;
    private final SchedulingObserver observer;
    private final PrefixLookup prefixes;
    private final int localPrefillMaxTokens;
    // Both null unless the policy's prefixes are routed.
    private final RoutedPrefixTrees prefillTrees;
    private final RoutedPrefixTrees decodeTrees;
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
        this(workers, prefillProfile, decodeProfile, observer, prefixes, localPrefillMaxTokens, null, null);
    }

    private PairScheduler(
            Function<WorkerRole, List<WorkerView>> workers,
            SchedulingProfile prefillProfile,
            SchedulingProfile decodeProfile,
            SchedulingObserver observer,
            PrefixLookup prefixes,
            int localPrefillMaxTokens,
            RoutedPrefixTrees prefillTrees,
            RoutedPrefixTrees decodeTrees) {
        this.workers = workers;
        this.prefillProfile = prefillProfile;
        this.decodeProfile = decodeProfile;
        this.observer = observer;
        this.prefixes = prefixes;
        this.localPrefillMaxTokens = localPrefillMaxTokens;
        this.prefillTrees = prefillTrees;
        this.decodeTrees = decodeTrees;
    }

    /**
     * Profiles that see this router's routed prefixes ({@code cache-aware}): each pool's trees are read
     * for its workers and given each chosen pair's prompt; no prefix index, no local prefill.
     */
    public static PairScheduler routed(
            Function<WorkerRole, List<WorkerView>> workers,
            SchedulingProfile prefillProfile,
            SchedulingProfile decodeProfile,
            SchedulingObserver observer,
            RoutedPrefixTrees prefillTrees,
            RoutedPrefixTrees decodeTrees) {
        return new PairScheduler(
                workers, prefillProfile, decodeProfile, observer, PrefixLookup.NONE, 0, prefillTrees, decodeTrees);
    }

    /**
     * The scheduler a router's settings describe: its profiles, and what its policy learns prefixes from —
     * {@code index} and local prefill up to {@code router.local-prefill-max-tokens}, or (routed policies)
     * a {@link RoutedPrefixTrees} per pool, bounded by the pool's {@code cache-aware} picker's
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
        SchedulingProfile prefill = SchedulingPlugins.profile("prefill", settings.prefill());
        SchedulingProfile decode = SchedulingPlugins.profile("decode", settings.decode());
        if (policy.prefixes() == SchedulingPolicy.PrefixSource.ROUTED) {
            return routed(
                    workers,
                    prefill,
                    decode,
                    observer,
                    new RoutedPrefixTrees(maxTreeBlocks(settings.prefill()), trees),
                    new RoutedPrefixTrees(maxTreeBlocks(settings.decode()), trees));
        }
        return new PairScheduler(
                workers,
                prefill,
                decode,
                observer,
                index,
                policy.localPrefill() ? settings.localPrefillMaxTokens() : 0);
    }

    private static long maxTreeBlocks(SchedulerSettings pool) {
        return pool.picker() instanceof PickerSettings.CacheAware c
                ? c.maxTreeBlocks()
                : PickerSettings.CacheAware.DEFAULTS.maxTreeBlocks();
    }

    /** A worker left the registry: it leaves this router's routed-prefix trees (if any). Loop only. */
    public void forgetWorker(String workerId) {
        if (prefillTrees != null) {
            prefillTrees.forgetWorker(workerId);
            decodeTrees.forgetWorker(workerId);
        }
    }

    /** The model is no longer served: its routed-prefix trees give their blocks back. Loop only. */
    public void close() {
        if (prefillTrees != null) {
            prefillTrees.clear();
            decodeTrees.clear();
        }
    }

    /** This router's routed-prefix trees of {@code role}'s pool, or null when its policy keeps none. */
    public RoutedPrefixTrees routedTrees(WorkerRole role) {
        return role == WorkerRole.PREFILL ? prefillTrees : decodeTrees;
    }

    public Choice choose(String sessionKey, String affinityWorker, int[] prompt, Set<String> avoid) {
        // One snapshot: the registry may change under us (it is fed by Hazelcast threads).
        List<WorkerView> prefillWorkers = workers.apply(WorkerRole.PREFILL);
        List<WorkerView> decodeWorkers = workers.apply(WorkerRole.DECODE);
        List<WorkerView> all = new ArrayList<>(prefillWorkers);
        all.addAll(decodeWorkers);
        boolean routed = prefillTrees != null;
        // What the profiles see; and what the workers hold, as far as this router knows (local prefill,
        // incremental transfer): the prefix index, or nothing when the policy's prefixes are routed.
        PromptPrefixes cached = PromptPrefixes.of(prompt, all, routed ? this::routedLeadingBlocks : prefixes);
        PromptPrefixes held = routed ? cached.nothingCached() : cached;
        Map<String, Long> routedBlocks = routed ? routedSizes() : Map.of();
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
            Optional<WorkerView> decode = decodeProfile.choose(
                    request(sessionKey, affinityWorker, prompt, decodeTick++, avoid, feedable, cached, routedBlocks),
                    decodeWorkers,
                    observer);
            if (decode.isEmpty()) {
                boolean unfed = decodeWorkers.stream().noneMatch(d -> feedable.contains(d.modelFingerprint()));
                return Choice.missing(unfed && !decodeWorkers.isEmpty() ? "prefill" : "decode");
            }
            WorkerView d = decode.get();
            CacheSpec spec = d.worker().cache();
            int decodeCached = spec == null ? PrefillRequest.NO_DECODE_CACHE : held.cached(d.id());
            if (spec != null
                    && spec.localPrefill()
                    && decodeCached > 0
                    && prompt.length - decodeCached * spec.blockSize() <= localPrefillMaxTokens) {
                return new Choice(d.id(), d.id(), null, decodeCached, decodeCached, spec.blockSize(), true);
            }
            Optional<WorkerView> prefill = prefillProfile.choose(
                    request(
                            sessionKey,
                            null,
                            prompt,
                            prefillTick++,
                            avoid,
                            Set.of(d.modelFingerprint()),
                            cached,
                            routedBlocks),
                    prefillWorkers,
                    observer);
            if (prefill.isPresent()) {
                WorkerView p = prefill.get();
                CacheSpec prefillSpec = p.worker().cache();
                if (routed) {
                    // SGLang inserts the request into the chosen worker's tree, in each pool.
                    prefillTrees.insert(p.id(), cached.blocksFor(p));
                    decodeTrees.insert(d.id(), cached.blocksFor(d));
                }
                return new Choice(
                        p.id(),
                        d.id(),
                        null,
                        decodeCached,
                        held.cached(p.id()),
                        prefillSpec == null ? 0 : prefillSpec.blockSize(),
                        false);
            }
            feedable.remove(d.modelFingerprint());
        }
    }

    private static SchedulingRequest request(
            String sessionKey,
            String affinityWorker,
            int[] prompt,
            long tick,
            Set<String> avoid,
            Set<Long> fingerprints,
            PromptPrefixes cached,
            Map<String, Long> routedBlocks) {
        return new SchedulingRequest(
                sessionKey,
                affinityWorker,
                prompt.length,
                tick,
                avoid,
                fingerprints,
                cached.promptBlocks(),
                cached.cachedBlocks(),
                routedBlocks);
    }

    /** Both pools' routed prefixes (worker ids are unique across pools). */
    private Map<String, Integer> routedLeadingBlocks(long[] blockHashes) {
        Map<String, Integer> out = new HashMap<>(prefillTrees.leadingBlocks(blockHashes));
        out.putAll(decodeTrees.leadingBlocks(blockHashes));
        return out;
    }

    private Map<String, Long> routedSizes() {
        Map<String, Long> out = new HashMap<>(prefillTrees.sizes());
        out.putAll(decodeTrees.sizes());
        return out;
    }
}
