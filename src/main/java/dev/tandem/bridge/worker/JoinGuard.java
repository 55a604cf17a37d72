package dev.tandem.bridge.worker;

import dev.tandem.bridge.BridgeFrames;
import dev.tandem.config.WorkerBridgeSettings;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.SocketAddress;
import java.util.function.LongSupplier;
import java.util.logging.Logger;

/**
 * What the worker bridge does about joins without the token, so that it cannot be guessed at line speed:
 * a connection is closed at its {@code perConnection}-th failure, and a source address with
 * {@code perAddress} failures within a window is refused unheard until the window closes. Failures are
 * counted ({@code tandem_worker_bridge_failed_joins_total} by reason) and logged as WARN with the peer:
 * an address's first failure in its window and its lock-out, at most {@link #LOG_LINES_PER_MINUTE} lines
 * a minute in all, so a flood of addresses cannot flood the log. One per bridge, on its event loop.
 */
final class JoinGuard {
    private static final Logger LOG = Logger.getLogger(JoinGuard.class.getName());
    /** Source addresses remembered at most: about 100 bytes each, so a megabyte or so under a flood. */
    static final int MAX_ADDRESSES = 10_000;

    static final int LOG_LINES_PER_MINUTE = 10;

    private final WorkerBridgeSettings.FailedJoins limits;
    private final FailedJoinLimiter limiter;
    private final LogThrottle logThrottle;
    private final Counter missingToken;
    private final Counter wrongToken;
    private final Counter rateLimited;

    JoinGuard(WorkerBridgeSettings.FailedJoins limits, MeterRegistry registry, LongSupplier nowMs) {
        this.limits = limits;
        this.limiter = new FailedJoinLimiter(limits.perAddress(), limits.windowMs(), MAX_ADDRESSES, nowMs);
        this.logThrottle = new LogThrottle(LOG_LINES_PER_MINUTE, 60_000, nowMs);
        this.missingToken = counter(registry, "missing_token");
        this.wrongToken = counter(registry, "wrong_token");
        this.rateLimited = counter(registry, "rate_limited");
    }

    private static Counter counter(MeterRegistry registry, String reason) {
        return Counter.builder("tandem.worker.bridge.failed.joins")
                .tag("reason", reason)
                .description("worker bridge joins refused for their token (missing_token, wrong_token) or unheard"
                        + " because their address failed too often (rate_limited)")
                .register(registry);
    }

    /** The peer's IP address (failed joins are limited per source address), or "unknown". */
    static String host(SocketAddress peer) {
        String host = peer == null ? null : peer.hostAddress();
        return host == null ? "unknown" : host;
    }

    /** The detail of an {@code unauthorized} refusal. */
    static String unauthorized(String token) {
        return token == null
                ? "the join has no 'token': worker-bridge.token is required"
                : "the join's 'token' does not match worker-bridge.token";
    }

    /**
     * The err frame refusing a join from {@code host} unheard, its address being locked out, or null when
     * the join may be checked. The caller writes it and closes the connection.
     */
    JsonObject lockout(String host, String replyAddress) {
        long retryAfterMs = limiter.retryAfterMs(host);
        if (retryAfterMs == 0) {
            return null;
        }
        rateLimited.increment();
        return BridgeFrames.err(
                        "too_many_failed_joins",
                        limits.perAddress() + " failed joins from " + host + " within " + limits.windowMs()
                                + " ms: joins from it are refused until the window closes, in " + retryAfterMs + " ms",
                        replyAddress)
                .put("retry_after_ms", retryAfterMs);
    }

    /**
     * Records a join from {@code host} refused for its token, the connection's {@code connectionFailures}-th;
     * true when the connection must now be closed.
     */
    boolean failed(String host, boolean tokenMissing, int connectionFailures) {
        (tokenMissing ? missingToken : wrongToken).increment();
        String reason = tokenMissing ? "missing_token" : "wrong_token";
        switch (limiter.recordFailure(host)) {
            case FIRST ->
                warn("a worker bridge join from " + host + " was refused (" + reason
                        + "); its further failures within " + limits.windowMs()
                        + " ms are only counted (tandem_worker_bridge_failed_joins_total), unless they lock it out");
            case LOCKED ->
                warn(limits.perAddress() + " worker bridge joins from " + host + " failed within "
                        + limits.windowMs() + " ms (the last: " + reason + "); its joins are refused unheard for "
                        + limiter.retryAfterMs(host) + " ms");
            case COUNTED -> {}
        }
        return connectionFailures >= limits.perConnection();
    }

    private void warn(String line) {
        long heldBack = logThrottle.admit();
        if (heldBack >= 0) {
            LOG.warning(
                    heldBack == 0
                            ? line
                            : line + " (" + heldBack + " such lines held back, over " + LOG_LINES_PER_MINUTE
                                    + " a minute)");
        }
    }
}
