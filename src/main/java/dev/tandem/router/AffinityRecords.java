package dev.tandem.router;

import dev.tandem.cluster.SessionAffinity;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * What a request's end writes to the shared session affinity, and what a worker's departure erases:
 * bounded, so a slow cluster never holds a finished response back, and never failing a request.
 */
final class AffinityRecords {
    private static final Logger LOG = Logger.getLogger(AffinityRecords.class.getName());
    /** A slow cluster must not hold a finished response back for its affinity record longer than this. */
    static final long RECORD_TIMEOUT_MS = 1000;

    private final SessionAffinity affinity;
    private final RouterLoop loop;

    AffinityRecords(SessionAffinity affinity, RouterLoop loop) {
        this.affinity = affinity;
        this.loop = loop;
    }

    /** Pins the request's session to its decode worker (if it has a session and it moved); done within the timeout. */
    Future<Void> record(ActiveRequest a) {
        String session = a.request.affinityKey();
        if (session == null || a.decodeWorker == null || a.decodeWorker.equals(a.affinityWorker)) {
            return Future.succeededFuture();
        }
        Promise<Void> done = Promise.promise();
        long timer = loop.setTimer(RECORD_TIMEOUT_MS, done::tryComplete);
        affinity.record(session, a.decodeWorker).onComplete(ar -> {
            loop.cancelTimer(timer);
            if (ar.failed()) {
                LOG.log(Level.FINE, "affinity not recorded for request " + a.id, ar.cause());
            }
            done.tryComplete();
        });
        return done.future();
    }

    void forgetWorker(String workerId) {
        affinity.forgetWorker(workerId)
                .onFailure(e -> LOG.log(Level.FINE, "affinity of " + workerId + " not dropped", e));
    }
}
