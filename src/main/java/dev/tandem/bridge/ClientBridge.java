package dev.tandem.bridge;

import dev.tandem.api.OpenAiRequestParser;
import dev.tandem.config.BridgeSettings;
import dev.tandem.router.DisaggRouter;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

/**
 * The event-bus bridge of one router for programs that are not HTTP clients: the consumers of
 * {@code tandem.generate} and {@code tandem.cancel}, and the TCP bridge clients reach them through.
 * Started on the router verticle's event loop, which then runs all of it.
 */
public final class ClientBridge {
  /** A send's reply waits this much longer than a request may take, so the request's own error comes first. */
  private static final long REPLY_SLACK_MS = 5_000;

  private final BridgeRequests requests;
  private final TcpBridgeServer tcp;
  private final BridgeClients clients;

  private ClientBridge(BridgeRequests requests, TcpBridgeServer tcp, BridgeClients clients) {
    this.requests = requests;
    this.tcp = tcp;
    this.clients = clients;
  }

  /** Starts the consumers, then the TCP listener when {@code bridge.tcp-port} is not -1. */
  public static Future<ClientBridge> start(Vertx vertx, BridgeSettings settings, OpenAiRequestParser parser,
                                           DisaggRouter router, long requestTimeoutMs) {
    BridgeClients clients = new BridgeClients();
    BridgeRequests requests = new BridgeRequests(vertx, parser, router, clients);
    TcpBridgeServer tcp = settings.tcpEnabled()
        ? new TcpBridgeServer(vertx, settings, clients, requestTimeoutMs + REPLY_SLACK_MS) : null;
    ClientBridge bridge = new ClientBridge(requests, tcp, clients);
    return requests.start()
        .compose(v -> tcp == null ? Future.<Void>succeededFuture() : tcp.listen())
        .recover(e -> requests.stop().transform(v -> Future.<Void>failedFuture(e)))
        .map(bridge);
  }

  /** The TCP bridge's port, or -1 when there is none. */
  public int tcpPort() {
    return tcp == null ? -1 : tcp.port();
  }

  /** Bridge connections open now. */
  public int connections() {
    return clients.openConnections();
  }

  /** Bridge requests received and not yet ended. */
  public int requests() {
    return requests.live();
  }

  /** Closes every connection (ending its requests) and the listener, then the consumers. */
  public Future<Void> stop() {
    Future<Void> listener = tcp == null ? Future.succeededFuture() : tcp.close();
    return listener.eventually(requests::stop);
  }
}
