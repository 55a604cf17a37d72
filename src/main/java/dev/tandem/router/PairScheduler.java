package dev.tandem.router;

import dev.tandem.cluster.WorkerDirectory;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.router.scheduling.SchedulingObserver;
import dev.tandem.router.scheduling.SchedulingProfile;
import dev.tandem.router.scheduling.SchedulingRequest;
import dev.tandem.router.scheduling.WorkerView;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * Chooses the decode worker, then a prefill worker for the same model, from the router's local
 * registry snapshot: the decode profile first (affinity), then the prefill profile (load). Workers a
 * request has seen fail are left out. Event loop only (the round-robin ticks are plain fields).
 */
public final class PairScheduler {

  /** The chosen pair, or which role had nobody to offer. */
  public record Choice(String prefillWorker, String decodeWorker, String missingRole) {
  }

  private final Function<WorkerRole, List<WorkerDescriptor>> directory;
  private final ToIntFunction<String> inFlight;
  private final SchedulingProfile prefillProfile;
  private final SchedulingProfile decodeProfile;
  private final SchedulingObserver observer;
  private long prefillTick;
  private long decodeTick;

  /**
   * @param inFlight requests in flight on a worker, counted across every router replica
   */
  public PairScheduler(WorkerDirectory directory, ToIntFunction<String> inFlight, SchedulingProfile prefillProfile,
                SchedulingProfile decodeProfile, SchedulingObserver observer) {
    this(directory::workers, inFlight, prefillProfile, decodeProfile, observer);
  }

  /** @param directory the registered workers of a role (a snapshot per call) */
  public PairScheduler(Function<WorkerRole, List<WorkerDescriptor>> directory, ToIntFunction<String> inFlight,
                SchedulingProfile prefillProfile, SchedulingProfile decodeProfile, SchedulingObserver observer) {
    this.directory = directory;
    this.inFlight = inFlight;
    this.prefillProfile = prefillProfile;
    this.decodeProfile = decodeProfile;
    this.observer = observer;
  }

  public Choice choose(String sessionKey, String affinityWorker, int promptTokens, Set<String> avoid) {
    // One snapshot: the directory may change under us (it is fed by Hazelcast threads).
    List<WorkerDescriptor> prefillWorkers = directory.apply(WorkerRole.PREFILL);
    List<WorkerDescriptor> allDecode = directory.apply(WorkerRole.DECODE);
    // Only decode workers some prefill worker can feed: KV moves between workers of one model fingerprint,
    // and engines of different kinds (a Java worker, one joined over the worker bridge) may serve one model.
    Set<Long> feedable = new HashSet<>();
    for (WorkerDescriptor p : prefillWorkers) {
      if (!avoid.contains(p.workerId())) {
        feedable.add(p.modelFingerprint());
      }
    }
    // A fingerprint whose prefill workers the profile turns down (all draining, say) is dropped and the
    // choice made again among the others; bounded by the number of fingerprints.
    while (true) {
      List<WorkerDescriptor> decodeWorkers = allDecode.stream()
          .filter(d -> feedable.contains(d.modelFingerprint())).toList();
      if (decodeWorkers.isEmpty()) {
        return new Choice(null, null, allDecode.isEmpty() ? "decode" : "prefill");
      }
      Optional<WorkerView> decode = decodeProfile.choose(new SchedulingRequest(sessionKey, affinityWorker,
          promptTokens, decodeTick++), views(decodeWorkers, -1, avoid), observer);
      if (decode.isEmpty()) {
        return new Choice(null, null, "decode");
      }
      long fingerprint = decodeWorkers.stream().filter(w -> w.workerId().equals(decode.get().id())).findFirst()
          .orElseThrow().modelFingerprint();
      Optional<WorkerView> prefill = prefillProfile.choose(
          new SchedulingRequest(sessionKey, null, promptTokens, prefillTick++),
          views(prefillWorkers, fingerprint, avoid), observer);
      if (prefill.isPresent()) {
        return new Choice(prefill.get().id(), decode.get().id(), null);
      }
      feedable.remove(fingerprint);
    }
  }

  private List<WorkerView> views(List<WorkerDescriptor> workers, long fingerprint, Set<String> avoid) {
    List<WorkerView> out = new ArrayList<>(workers.size());
    for (WorkerDescriptor w : workers) {
      if ((fingerprint == -1 || w.modelFingerprint() == fingerprint) && !avoid.contains(w.workerId())) {
        out.add(new WorkerView(w.workerId(), w.model(), inFlight.applyAsInt(w.workerId()), w.draining()));
      }
    }
    return out;
  }
}
