package dev.tandem.router.scheduling;

import dev.tandem.protocol.WorkerView;

/**
 * KV moves only between workers of one model fingerprint (one model, one KV layout): workers of other
 * fingerprints than the request allows are left out. Always on.
 */
public final class ModelMatchFilter implements Filter {
    @Override
    public String name() {
        return "model-match";
    }

    @Override
    public boolean admits(SchedulingRequest request, WorkerView worker) {
        return request.modelFingerprints() == null
                || request.modelFingerprints().contains(worker.modelFingerprint());
    }
}
