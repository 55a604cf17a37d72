package dev.tandem.bridge.client;

import dev.tandem.config.BridgeSettings;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
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
    private final Set<TcpClientConnection> connections = new HashSet<>();
    private NetServer server;

    TcpClientBridge(Vertx vertx, BridgeSettings settings, ClientConnections clients, long replyTimeoutMs) {
        this.vertx = vertx;
        this.settings = settings;
        this.clients = clients;
        this.replyTimeoutMs = replyTimeoutMs;
    }

    Future<Void> listen() {
        server = vertx.createNetServer(new NetServerOptions().setTcpNoDelay(true))
                .connectHandler(socket -> {
                    TcpClientConnection connection = new TcpClientConnection(
                            socket,
                            vertx.eventBus(),
                            clients,
                            settings.maxFrameBytes(),
                            replyTimeoutMs,
                            connections::remove);
                    connections.add(connection);
                    connection.start();
                });
        return server.listen(settings.tcpPort(), settings.host())
                .<Void>mapEmpty()
                .recover(e -> Future.failedFuture(new IllegalStateException(
                        "the TCP event-bus bridge cannot listen on " + settings.host() + ":" + settings.tcpPort()
                                + " (bridge.tcp-port): " + e.getMessage(),
                        e)));
    }

    /** The port it listens on (the configured one, or the one the OS chose for 0). */
    int port() {
        return server.actualPort();
    }

    Future<Void> close() {
        if (server == null) {
            return Future.succeededFuture();
        }
        // Closing each socket ends its requests; then the listener.
        new ArrayList<>(connections).forEach(TcpClientConnection::close);
        return server.close();
    }
}
