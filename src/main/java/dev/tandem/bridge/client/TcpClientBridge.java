package dev.tandem.bridge.client;

import dev.tandem.api.ApiKeys;
import dev.tandem.bridge.BridgeFrames;
import dev.tandem.config.BridgeSettings;
import dev.tandem.security.TcpListener;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Set;

/**
 * The TCP event-bus bridge's listener: the Vert.x TCP bridge protocol (4-byte length + JSON frames)
 * for clients in any language, one {@link TcpClientConnection} per socket. Created on the router's
 * event loop, so every connection runs there too, next to the requests it starts.
 */
final class TcpClientBridge {
    private final Vertx vertx;
    private final BridgeSettings settings;
    private final ClientConnections clients;
    private final long replyTimeoutMs;
    private final ApiKeys keys;
    private final Set<TcpClientConnection> connections = new HashSet<>();
    private TcpListener server;
    private long sweepTimer = -1;

    TcpClientBridge(
            Vertx vertx, BridgeSettings settings, ClientConnections clients, ApiKeys keys, long replyTimeoutMs) {
        this.keys = keys;
        this.vertx = vertx;
        this.settings = settings;
        this.clients = clients;
        this.replyTimeoutMs = replyTimeoutMs;
    }

    Future<Void> listen() {
        server = new TcpListener(vertx, "bridge", settings.tls(), settings.connections());
        Future<?> listening = server.listen(
                settings.host(),
                settings.tcpPort(),
                socket -> {
                    TcpClientConnection connection = new TcpClientConnection(
                            socket,
                            vertx.eventBus(),
                            clients,
                            keys,
                            settings.maxFrameBytes(),
                            replyTimeoutMs,
                            connections::remove);
                    connections.add(connection);
                    connection.start();
                },
                reason -> BridgeFrames.encode(BridgeFrames.err("too_many_connections", reason, null)));
        long period = sweepPeriodMs(settings.idleTimeoutMs(), settings.frameReadTimeoutMs());
        if (period > 0) {
            sweepTimer = vertx.setPeriodic(period, id -> closeTimedOut());
        }
        return listening
                .<Void>mapEmpty()
                .recover(e -> Future.failedFuture(new IllegalStateException(
                        "the TCP event-bus bridge cannot listen on " + settings.host() + ":" + settings.tcpPort()
                                + " (bridge.tcp-port): " + e.getMessage(),
                        e)));
    }

    /** The port it listens on (the configured one, or the one the OS chose for 0). */
    int port() {
        return server.port();
    }

    /** A quarter of the shorter timeout (at least 50 ms): a connection outlives its limit by at most that. */
    static long sweepPeriodMs(long idleMs, long frameReadMs) {
        long shortest = Math.min(idleMs > 0 ? idleMs : Long.MAX_VALUE, frameReadMs > 0 ? frameReadMs : Long.MAX_VALUE);
        return shortest == Long.MAX_VALUE ? 0 : Math.max(50, shortest / 4);
    }

    private void closeTimedOut() {
        long now = System.nanoTime();
        for (TcpClientConnection c : new ArrayList<>(connections)) {
            c.closeIfTimedOut(now, settings.idleTimeoutMs(), settings.frameReadTimeoutMs());
        }
    }

    Future<Void> close() {
        if (sweepTimer != -1) {
            vertx.cancelTimer(sweepTimer);
        }
        if (server == null) {
            return Future.succeededFuture();
        }
        // Closing each socket ends its requests; then the listener.
        new ArrayList<>(connections).forEach(TcpClientConnection::close);
        return server.close();
    }
}
