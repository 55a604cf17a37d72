package dev.tandem.router;

import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import dev.tandem.router.scheduling.SchedulingObserver;
import dev.tandem.router.scheduling.SchedulingProfile;
import dev.tandem.router.scheduling.SchedulingRequest;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Where a request's workers are chosen: the decode worker first (the decode profile: session affinity),
 * then a prefill worker that can feed it (the prefill profile: load). Both profiles see the same
 * {@link WorkerView} snapshot and leave out the workers that failed the request; a decode worker is
 * only chosen where some prefill worker shares its model fingerprint. Loop only (the round-robin ticks
 * are plain fields).
 */
public final class PairScheduler {

    /** The chosen pair, or which role had nobody to offer. */
    public record Choice(String prefillWorker, String decodeWorker, String missingRole) {}

    private final Function<WorkerRole, List<WorkerView>> workers;
    private final SchedulingProfile prefillProfile;
    private final SchedulingProfile decodeProfile;
    private final SchedulingObserver observer;
    private long prefillTick;
    private long decodeTick;

    /** @param workers the registered workers of a role with their load (a snapshot per call) */
    public PairScheduler(
            Function<WorkerRole, List<WorkerView>> workers,
            SchedulingProfile prefillProfile,
            SchedulingProfile decodeProfile,
            SchedulingObserver observer) {
        this.workers = workers;
        this.prefillProfile = prefillProfile;
        this.decodeProfile = decodeProfile;
        this.observer = observer;
    }

    public Choice choose(String sessionKey, String affinityWorker, int promptTokens, Set<String> avoid) {
        // One snapshot: the registry may change under us (it is fed by Hazelcast threads).
        List<WorkerView> prefillWorkers = workers.apply(WorkerRole.PREFILL);
        List<WorkerView> decodeWorkers = workers.apply(WorkerRole.DECODE);
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
                    new SchedulingRequest(sessionKey, affinityWorker, promptTokens, decodeTick++, avoid, feedable),
                    decodeWorkers,
                    observer);
            if (decode.isEmpty()) {
                boolean unfed = decodeWorkers.stream().noneMatch(d -> feedable.contains(d.modelFingerprint()));
                return new Choice(null, null, unfed && !decodeWorkers.isEmpty() ? "prefill" : "decode");
            }
            long fingerprint = decode.get().modelFingerprint();
            Optional<WorkerView> prefill = prefillProfile.choose(
                    new SchedulingRequest(sessionKey, null, promptTokens, prefillTick++, avoid, Set.of(fingerprint)),
                    prefillWorkers,
                    observer);
            if (prefill.isPresent()) {
                return new Choice(prefill.get().id(), decode.get().id(), null);
            }
            feedable.remove(fingerprint);
        }
    }
}
