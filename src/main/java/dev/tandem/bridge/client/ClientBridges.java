package dev.tandem.bridge.client;

import dev.tandem.api.ApiKeys;
import dev.tandem.api.OpenAiRequestParser;
import dev.tandem.bridge.console.ConsoleFeed;
import dev.tandem.config.BridgeSettings;
import dev.tandem.router.RequestRouter;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;

/**
 * The event-bus bridges of one router for programs that are not HTTP clients: the consumers of
 * {@code tandem.generate} and {@code tandem.cancel}, and the TCP and SockJS bridges clients reach them
 * through. Started on the router verticle's event loop, which then runs all of it.
 */
public final class ClientBridges {
    /** A send's reply waits this much longer than a request may take, so the request's own error comes first. */
    private static final long REPLY_SLACK_MS = 5_000;

    private final ClientRequests requests;
    private final TcpClientBridge tcp;
    private final ClientConnections clients;
    private final long replyTimeoutMs;
    private SockJsClientBridge sockJs;

    private ClientBridges(
            ClientRequests requests, TcpClientBridge tcp, ClientConnections clients, long replyTimeoutMs) {
        this.requests = requests;
        this.tcp = tcp;
        this.clients = clients;
        this.replyTimeoutMs = replyTimeoutMs;
    }

    /**
     * Starts the consumers, then the TCP listener when {@code bridge.tcp-port} is not -1. {@code keys}: with
     * API keys set, every TCP frame but a ping must carry one.
     */
    public static Future<ClientBridges> start(
            Vertx vertx,
            BridgeSettings settings,
            OpenAiRequestParser parser,
            RequestRouter router,
            ApiKeys keys,
            long requestTimeoutMs) {
        ClientConnections clients = new ClientConnections();
        ClientRequests requests = new ClientRequests(vertx, parser, router, clients);
        long replyTimeoutMs = requestTimeoutMs + REPLY_SLACK_MS;
        TcpClientBridge tcp =
                settings.tcpEnabled() ? new TcpClientBridge(vertx, settings, clients, keys, replyTimeoutMs) : null;
        ClientBridges bridge = new ClientBridges(requests, tcp, clients, replyTimeoutMs);
        return requests.start()
                .compose(v -> tcp == null ? Future.<Void>succeededFuture() : tcp.listen())
                .recover(e -> requests.stop().transform(v -> Future.<Void>failedFuture(e)))
                .map(bridge);
    }

    /**
     * Mounts the SockJS bridge at {@code /eventbus} on the router's HTTP routes; its sockets share this
     * bridge's connections and requests. {@code maxBodyBytes} ({@code http.max-body-bytes}) bounds an XHR
     * transport's POST, as the HTTP server's WebSocket limit bounds a message. {@code keys}: with API keys
     * set, every frame must carry one.
     * {@code feed}: the console feed, told when a socket starts and stops listening to it.
     * {@code allowedOrigins}: web origins besides the router's own whose pages may connect.
     */
    public void mountSockJs(
            Vertx vertx,
            Router router,
            long maxBodyBytes,
            ApiKeys keys,
            ConsoleFeed feed,
            java.util.List<String> allowedOrigins) {
        sockJs = new SockJsClientBridge(vertx, clients, keys, feed);
        sockJs.mount(router, maxBodyBytes, replyTimeoutMs, allowedOrigins);
    }

    /** SockJS sockets open now (0 without the SockJS bridge). */
    public int sockJsSockets() {
        return sockJs == null ? 0 : sockJs.sockets();
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
        if (sockJs != null) {
            sockJs.closeAll();
        }
        Future<Void> listener = tcp == null ? Future.succeededFuture() : tcp.close();
        return listener.eventually(requests::stop);
    }
}
