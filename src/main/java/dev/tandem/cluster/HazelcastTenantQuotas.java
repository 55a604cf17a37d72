package dev.tandem.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;

/**
 * {@link TenantQuotas} in the IMap {@code tandem.quotas}: one entry per tenant and clock minute of cluster
 * time ({@code minute|tenant}), changed only by a {@link QuotaWindow} on the entry's owner, so the sum over
 * every router replica obeys the quota. One asynchronous round trip per limited request; unlimited tenants
 * never touch the map. Entries live two minutes past their last change. Completes on the given context.
 */
public final class HazelcastTenantQuotas implements TenantQuotas {
    static final long MINUTE_MS = 60_000;

    private final HazelcastInstance hazelcast;
    private final IMap<String, long[]> map;
    private final Context context;
    private final long timeoutMs;

    /** Creating the map proxy may wait on the cluster: not on an event loop. */
    public HazelcastTenantQuotas(HazelcastInstance hazelcast, Context context, long timeoutMs) {
        this.hazelcast = hazelcast;
        this.map = hazelcast.getMap(ClusterNames.QUOTAS);
        // One read now, off the loop: the partition table and the connections to the owners are set up before the
        // first request's check, which otherwise took over 500 ms on a busy machine and was taken for a partition.
        map.get("");
        this.context = context;
        this.timeoutMs = timeoutMs;
    }

    @Override
    public Future<QuotaDecision> take(String tenant, long rpm, long tpm, long tokens) {
        if (rpm <= 0 && tpm <= 0) {
            return Future.succeededFuture(QuotaDecision.unlimited());
        }
        long now = hazelcast.getCluster().getClusterTime();
        long window = now / MINUTE_MS;
        long resetMs = (window + 1) * MINUTE_MS - now;
        Promise<QuotaDecision> decided = Promise.promise();
        // A partitioned or migrating owner may not answer soon: past the timeout it counts as unreachable.
        long timer = context.owner()
                .setTimer(
                        timeoutMs,
                        t -> decided.tryFail("the quota counters did not answer within " + timeoutMs
                                + " ms (flow-control.quota-timeout-ms)"));
        Future.fromCompletionStage(map.submitToKey(key(tenant, window), new QuotaWindow(rpm, tpm, 1, tokens)), context)
                .onComplete(ar -> {
                    context.owner().cancelTimer(timer);
                    if (ar.failed()) {
                        decided.tryFail(ar.cause());
                        return;
                    }
                    long[] r = ar.result();
                    decided.tryComplete(new QuotaDecision(r[0] == 1, window, resetMs, rpm, r[1], tpm, r[2]));
                });
        return decided.future();
    }

    @Override
    public void giveBack(String tenant, long window, long tokens) {
        if (tokens > 0 && window >= 0) {
            map.submitToKey(key(tenant, window), new QuotaWindow(0, 0, 0, -tokens));
        }
    }

    private static String key(String tenant, long window) {
        return window + "|" + tenant;
    }
}
