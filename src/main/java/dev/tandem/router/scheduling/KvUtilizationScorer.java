package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerView;
import java.util.List;

/**
 * The share of a worker's KV memory still free, as it reported at its last heartbeat: a decode worker
 * near its {@code kv-capacity-bytes} scores near 0 and will soon refuse new KV. A worker that reports no
 * capacity scores 1 (no opinion).
 */
public final class KvUtilizationScorer implements Scorer {
    @Override
    public String name() {
        return "kv-utilization";
    }

    @Override
    public double score(SchedulingRequest request, WorkerView worker, List<WorkerView> candidates) {
        WorkerLoad load = worker.load();
        if (load.kvBytesCapacity() <= 0) {
            return 1.0;
        }
        return 1.0 - Math.min(1.0, (double) load.kvBytesUsed() / load.kvBytesCapacity());
    }
}
