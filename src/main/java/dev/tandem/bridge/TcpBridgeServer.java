package dev.tandem.bridge;

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
 * for clients in any language, one {@link TcpBridgeConnection} per socket. Created on the router's
 * event loop, so every connection runs there too, next to the requests it starts.
 */
final class TcpBridgeServer {
  private final Vertx vertx;
  private final BridgeSettings settings;
  private final BridgeClients clients;
  private final long replyTimeoutMs;
  private final Set<TcpBridgeConnection> connections = new HashSet<>();
  private NetServer server;

  TcpBridgeServer(Vertx vertx, BridgeSettings settings, BridgeClients clients, long replyTimeoutMs) {
    this.vertx = vertx;
    this.settings = settings;
    this.clients = clients;
    this.replyTimeoutMs = replyTimeoutMs;
  }

  Future<Void> listen() {
    server = vertx.createNetServer(new NetServerOptions().setTcpNoDelay(true))
        .connectHandler(socket -> {
          TcpBridgeConnection connection = new TcpBridgeConnection(socket, vertx.eventBus(), clients,
              settings.maxFrameBytes(), replyTimeoutMs, connections::remove);
          connections.add(connection);
          connection.start();
        });
    return server.listen(settings.tcpPort(), settings.host()).<Void>mapEmpty()
        .recover(e -> Future.failedFuture(new IllegalStateException("the TCP event-bus bridge cannot listen on "
            + settings.host() + ":" + settings.tcpPort() + " (bridge.tcp-port): " + e.getMessage(), e)));
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
    new ArrayList<>(connections).forEach(TcpBridgeConnection::close);
    return server.close();
  }
}
