package dev.tandem.bench;

import io.vertx.core.Future;
import io.vertx.core.Promise;

/**
 * One soak request on its way. It ends exactly once — answered, cancelled, failed or timed out, whichever
 * comes first — and an abort (the timeout) also stops it on the wire. Used on the traffic's one context.
 */
final class SoakCall {
    private final Promise<SoakResult> result = Promise.promise();
    private final long sentNanos = System.nanoTime();
    private Runnable stop = () -> {};

    long sentNanos() {
        return sentNanos;
    }

    double millisSinceSent() {
        return (System.nanoTime() - sentNanos) / 1e6;
    }

    /** How to stop the request on the wire (reset the HTTP request, send a WebSocket cancel). */
    void onStop(Runnable stop) {
        this.stop = stop;
    }

    /** Ends the call with {@code r} unless it already ended; true when this ended it. */
    boolean end(SoakResult r) {
        return result.tryComplete(r);
    }

    /** Ends the call with {@code r} and stops it on the wire, unless it already ended. */
    void abort(SoakResult r) {
        if (result.tryComplete(r)) {
            stop.run();
        }
    }

    Future<SoakResult> future() {
        return result.future();
    }
}
