package dev.tandem.upstream;

import io.vertx.core.Vertx;
import java.util.logging.Logger;

/**
 * Polls an upstream's {@code /health} and {@code /metrics} every {@code upstream-poll-ms}, on the
 * worker's event loop (the calls are asynchronous). A failed or non-2xx health check makes the upstream
 * unhealthy until one succeeds; {@code onChange} runs on every change, so the worker can drain and
 * rejoin at once rather than at its next heartbeat. Metrics that cannot be read leave the last load.
 */
public final class UpstreamMonitor {
    private static final Logger LOG = Logger.getLogger(UpstreamMonitor.class.getName());

    private final Vertx vertx;
    private final UpstreamClient client;
    private final long pollMs;
    private final Runnable onChange;
    private volatile boolean healthy = true;
    private volatile UpstreamLoad load = UpstreamLoad.IDLE;
    private long timer = -1;
    private boolean polling;
    private boolean stopped;

    public UpstreamMonitor(Vertx vertx, UpstreamClient client, long pollMs, Runnable onChange) {
        this.vertx = vertx;
        this.client = client;
        this.pollMs = pollMs;
        this.onChange = onChange;
    }

    public boolean healthy() {
        return healthy;
    }

    public UpstreamLoad load() {
        return load;
    }

    /** Call on the worker's context. */
    public void start() {
        timer = vertx.setPeriodic(0, pollMs, id -> poll());
    }

    public void stop() {
        stopped = true;
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }

    private void poll() {
        if (polling || stopped) {
            return; // the last poll has not come back: the timeout bounds it
        }
        polling = true;
        client.getText("/health").onComplete(h -> {
            setHealthy(h.succeeded(), h.succeeded() ? null : h.cause().getMessage());
            if (h.failed()) {
                polling = false;
                return;
            }
            client.getText("/metrics").onComplete(m -> {
                polling = false;
                if (m.succeeded()) {
                    UpstreamLoad next = UpstreamLoad.parse(m.result());
                    if (!next.equals(load)) {
                        load = next;
                        onChange.run();
                    }
                }
            });
        });
    }

    private void setHealthy(boolean now, String why) {
        if (now == healthy || stopped) {
            return;
        }
        healthy = now;
        if (now) {
            LOG.info("upstream " + client.baseUrl() + " is healthy again: the worker takes requests");
        } else {
            LOG.warning("upstream " + client.baseUrl() + " is unhealthy (" + why + "): the worker drains");
        }
        onChange.run();
    }
}
