package dev.tandem.router;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * A {@link PairScheduler} per served model, each seeing only that model's workers: round-robin turns,
 * routed-prefix trees and the profiles' choices of one model never mix with another's (prefix hashes
 * are seeded with the model's fingerprint, so the shared prefix index is per model already). Made the
 * first time a model is asked for; dropped when the model stops being served. Loop only.
 */
public final class ModelSchedulers {
    private final Function<ServedModel, PairScheduler> factory;
    private final Map<Key, PairScheduler> schedulers = new HashMap<>();

    private record Key(String name, long fingerprint) {
        static Key of(ServedModel m) {
            return new Key(m.name(), m.fingerprint());
        }
    }

    /** @param factory a scheduler over one model's workers */
    public ModelSchedulers(Function<ServedModel, PairScheduler> factory) {
        this.factory = factory;
    }

    /** One scheduler for whatever model is asked (a router core under test, fed one model's workers). */
    public static ModelSchedulers shared(PairScheduler pairs) {
        return new ModelSchedulers(m -> pairs);
    }

    /** Chooses a pair among {@code model}'s workers ({@link PairScheduler#choose}). */
    public PairScheduler.Choice choose(
            ServedModel model, String sessionKey, String affinityWorker, int[] prompt, Set<String> avoid) {
        return of(model).choose(sessionKey, affinityWorker, prompt, avoid);
    }

    /** The model's scheduler, made now if it has none. */
    public PairScheduler of(ServedModel model) {
        return schedulers.computeIfAbsent(Key.of(model), k -> factory.apply(model));
    }

    /** A worker left the registry: every scheduler forgets what it routed there. */
    public void forgetWorker(String workerId) {
        schedulers.values().forEach(s -> s.forgetWorker(workerId));
    }

    /** The model is no longer served: its scheduler (turns, routed trees) goes with it. */
    public void forgetModel(ServedModel model) {
        PairScheduler gone = schedulers.remove(Key.of(model));
        if (gone != null) {
            gone.close();
        }
    }
}
