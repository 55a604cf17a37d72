package dev.tandem.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.query.Predicates;
import io.vertx.core.Context;
import io.vertx.core.Future;

/**
 * {@link SessionAffinity} in a Hazelcast IMap. Entries idle out and the map is size-bounded (see
 * {@link HazelcastConfigFactory}); reads usually hit the near cache. Completes on the given context.
 */
public final class AffinityStore implements SessionAffinity {
    private final IMap<String, String> map;
    private final Context context;

    /** Creating the map proxy may wait on the cluster: not on an event loop. */
    public AffinityStore(HazelcastInstance hazelcast, Context context) {
        this.map = hazelcast.getMap(ClusterNames.AFFINITY);
        this.context = context;
    }

    @Override
    public Future<String> lookup(String sessionKey) {
        return Future.fromCompletionStage(map.getAsync(sessionKey), context);
    }

    @Override
    public Future<Void> record(String sessionKey, String decodeWorkerId) {
        return Future.fromCompletionStage(map.setAsync(sessionKey, decodeWorkerId), context);
    }

    @Override
    public Future<Void> forgetSession(String sessionKey) {
        return Future.fromCompletionStage(map.deleteAsync(sessionKey), context).mapEmpty();
    }

    /** Every router that notices does it; removing twice is harmless. The cluster-wide removal runs on a worker thread. */
    @Override
    public Future<Void> forgetWorker(String decodeWorkerId) {
        return context.owner()
                .executeBlocking(
                        () -> {
                            map.removeAll(Predicates.equal("this", decodeWorkerId));
                            return null;
                        },
                        false);
    }
}
