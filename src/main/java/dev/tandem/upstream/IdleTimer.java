package dev.tandem.upstream;

import io.vertx.core.Vertx;

/**
 * Fires once when nothing touched it for {@code timeoutMs}. One periodic check per stream rather than a
 * timer per chunk: a chunk only stamps the time. Used on one event loop.
 */
final class IdleTimer {
    private final Vertx vertx;
    private final long timeoutNanos;
    private final Runnable onIdle;
    private final long timer;
    private long last = System.nanoTime();
    private boolean stopped;

    IdleTimer(Vertx vertx, long timeoutMs, Runnable onIdle) {
        this.vertx = vertx;
        this.timeoutNanos = timeoutMs * 1_000_000;
        this.onIdle = onIdle;
        this.timer = vertx.setPeriodic(Math.max(10, timeoutMs / 4), id -> check());
    }

    void touch() {
        last = System.nanoTime();
    }

    void stop() {
        if (!stopped) {
            stopped = true;
            vertx.cancelTimer(timer);
        }
    }

    private void check() {
        if (!stopped && System.nanoTime() - last >= timeoutNanos) {
            stop();
            onIdle.run();
        }
    }
}
