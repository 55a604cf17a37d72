package dev.tandem.router;

import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import dev.tandem.router.scheduling.SchedulingObserver;
import dev.tandem.router.scheduling.SchedulingProfile;
import dev.tandem.router.scheduling.SchedulingRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
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
 * shares its model fingerprint. Loop only (the round-robin ticks are plain fields).
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
        this.workers = workers;
        this.prefillProfile = prefillProfile;
        this.decodeProfile = decodeProfile;
        this.observer = observer;
        this.prefixes = prefixes;
        this.localPrefillMaxTokens = localPrefillMaxTokens;
    }

    public Choice choose(String sessionKey, String affinityWorker, int[] prompt, Set<String> avoid) {
        // One snapshot: the registry may change under us (it is fed by Hazelcast threads).
        List<WorkerView> prefillWorkers = workers.apply(WorkerRole.PREFILL);
        List<WorkerView> decodeWorkers = workers.apply(WorkerRole.DECODE);
        List<WorkerView> all = new ArrayList<>(prefillWorkers);
        all.addAll(decodeWorkers);
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
            Optional<WorkerView> decode = decodeProfile.choose(
                    request(sessionKey, affinityWorker, prompt, decodeTick++, avoid, feedable, cached),
                    decodeWorkers,
                    observer);
            if (decode.isEmpty()) {
                boolean unfed = decodeWorkers.stream().noneMatch(d -> feedable.contains(d.modelFingerprint()));
                return Choice.missing(unfed && !decodeWorkers.isEmpty() ? "prefill" : "decode");
            }
            WorkerView d = decode.get();
            CacheSpec spec = d.worker().cache();
            int decodeCached = spec == null ? PrefillRequest.NO_DECODE_CACHE : cached.cached(d.id());
            if (spec != null
                    && spec.localPrefill()
                    && decodeCached > 0
                    && prompt.length - decodeCached * spec.blockSize() <= localPrefillMaxTokens) {
                return new Choice(d.id(), d.id(), null, decodeCached, decodeCached, spec.blockSize(), true);
            }
            Optional<WorkerView> prefill = prefillProfile.choose(
                    request(sessionKey, null, prompt, prefillTick++, avoid, Set.of(d.modelFingerprint()), cached),
                    prefillWorkers,
                    observer);
            if (prefill.isPresent()) {
                WorkerView p = prefill.get();
                CacheSpec prefillSpec = p.worker().cache();
                return new Choice(
                        p.id(),
                        d.id(),
                        null,
                        decodeCached,
                        cached.cached(p.id()),
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
            PromptPrefixes cached) {
        return new SchedulingRequest(
                sessionKey,
                affinityWorker,
                prompt.length,
                tick,
                avoid,
                fingerprints,
                cached.promptBlocks(),
                cached.cachedBlocks());
    }
}
