package dev.tandem.bridge.client;

import dev.tandem.api.ApiKeys;
import dev.tandem.bridge.console.ConsoleFeed;
import dev.tandem.protocol.Addresses;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.bridge.PermittedOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.sockjs.BridgeEvent;
import io.vertx.ext.web.handler.sockjs.SockJSBridgeOptions;
import io.vertx.ext.web.handler.sockjs.SockJSHandler;
import io.vertx.ext.web.handler.sockjs.SockJSHandlerOptions;
import io.vertx.ext.web.handler.sockjs.SockJSSocket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The SockJS event-bus bridge at {@value #PATH} for browsers: Vert.x's own SockJS bridge with
 * {@link ClientPermissions} (plus receiving on {@link Addresses#CONSOLE_CLUSTER}), and this bridge event
 * handler tying each socket into the same {@link ClientConnections} as the TCP bridge. Every socket is a
 * connection; its sends carry {@link ClientConnections#CONNECTION_HEADER}, set here and never taken from
 * the client; a {@code tandem.client.*} address belongs to one socket; closing the socket (a browser
 * tab going away) ends its requests. Runs on the router's event loop, where its HTTP server runs.
 *
 * <p>Vert.x's bridge sends through the clustered event bus; {@code tandem.generate} and
 * {@code tandem.cancel} have only local consumers, registered nowhere in the cluster, so a send is
 * delivered on this node. It registers a socket's addresses as clustered consumers (one subscription
 * write per registration, not per request); the pushes to them are local-only.
 */
final class SockJsClientBridge implements Handler<BridgeEvent> {
    static final String PATH = "/eventbus";
    /** Client addresses one socket may receive on, as over TCP. */
    static final int MAX_REGISTRATIONS = TcpClientConnection.MAX_REGISTRATIONS;
    /** Longer addresses are refused by the bridge itself; they are never recorded as owned. */
    private static final int MAX_ADDRESS_LENGTH = 200;
    /**
     * Vert.x counts a socket's registrations and its sends awaiting a reply together: room for every
     * client address, the console feed and a full {@link ClientRequests#MAX_IN_FLIGHT_PER_CONNECTION}.
     */
    private static final int MAX_HANDLERS = MAX_REGISTRATIONS + 1 + ClientRequests.MAX_IN_FLIGHT_PER_CONNECTION + 16;
    /** The vendored SockJS client, for the iframe transports (SockJS would point browsers at a CDN). */
    private static final String LIBRARY_URL = "/vendor/sockjs.min.js";

    private final Vertx vertx;
    private final ClientConnections clients;
    private final ApiKeys keys;
    private final ConsoleFeed feed;
    private final Map<SockJSSocket, Socket> sockets = new HashMap<>();

    /** What one SockJS socket holds: its connection id and what it receives on. */
    private static final class Socket {
        final String connection;
        final Set<String> addresses = new HashSet<>();
        boolean console;

        Socket(String connection) {
            this.connection = connection;
        }
    }

    SockJsClientBridge(Vertx vertx, ClientConnections clients, ApiKeys keys, ConsoleFeed feed) {
        this.vertx = vertx;
        this.clients = clients;
        this.keys = keys;
        this.feed = feed;
    }

    /**
     * Mounts the bridge at {@value #PATH} on {@code router}. The XHR transports' POST bodies are bounded
     * by {@code maxBodyBytes}; a WebSocket message by the HTTP server's WebSocket limit.
     */
    void mount(Router router, long maxBodyBytes, long replyTimeoutMs, List<String> allowedOrigins) {
        SockJSBridgeOptions options = new SockJSBridgeOptions()
                .setInboundPermitteds(ClientPermissions.options().getInboundPermitteds())
                .setOutboundPermitteds(
                        new ArrayList<>(ClientPermissions.options().getOutboundPermitteds()))
                .addOutboundPermitted(new PermittedOptions().setAddress(Addresses.CONSOLE_CLUSTER))
                .setMaxAddressLength(MAX_ADDRESS_LENGTH)
                .setMaxHandlersPerSocket(MAX_HANDLERS)
                .setReplyTimeout(replyTimeoutMs);
        // No session cookie: nothing here uses web sessions, and a cookie would only invite CSRF questions.
        SockJSHandlerOptions handlerOptions =
                new SockJSHandlerOptions().setInsertJSESSIONID(false).setLibraryURL(LIBRARY_URL);
        Router sockJs = SockJSHandler.create(vertx, handlerOptions).bridge(options, this);
        router.route(PATH + "/*").handler(new OriginCheck(allowedOrigins));
        // The XHR transports need their bodies read first, and bounded.
        router.post(PATH + "/*").handler(BodyHandler.create(false).setBodyLimit(maxBodyBytes));
        router.route(PATH + "/*").subRouter(sockJs);
    }

    /** Sockets open now. */
    int sockets() {
        return sockets.size();
    }

    /** Closes every socket; each one's close ends its requests. */
    void closeAll() {
        new ArrayList<>(sockets.keySet()).forEach(SockJSSocket::close);
    }

    @Override
    public void handle(BridgeEvent event) {
        switch (event.type()) {
            case SOCKET_CREATED -> {
                sockets.put(event.socket(), new Socket(clients.open()));
                event.complete(true);
            }
            case SEND, PUBLISH -> forward(event);
            case REGISTER -> register(event);
            case REGISTERED -> {
                registered(event);
                event.complete(true);
            }
            case UNREGISTER -> {
                unregister(event);
                event.complete(true);
            }
            case SOCKET_CLOSED -> {
                release(event.socket());
                event.complete(true);
            }
            case SOCKET_ERROR -> {
                // The bridge has already dropped the socket's registrations: it cannot go on half-served.
                release(event.socket());
                event.complete(true);
                event.socket().close();
            }
            case RECEIVE -> {
                // Vert.x writes to the socket without looking at backpressure: a client that does not read
                // would make this router buffer its pushes without bound. Cut it off instead.
                if (event.socket().writeQueueFull()) {
                    event.complete(false);
                    event.socket().close();
                } else {
                    event.complete(true);
                }
            }
            default -> event.complete(true); // SOCKET_PING, SOCKET_IDLE: the bridge's defaults
        }
    }

    private void forward(BridgeEvent event) {
        Socket socket = sockets.get(event.socket());
        JsonObject raw = event.getRawMessage();
        if (socket == null) {
            event.complete(false);
            return;
        }
        if (!authorized(raw)) {
            refuse(event, "unauthorized", null);
            return;
        }
        Object reply = raw.getValue("replyAddress");
        if (reply != null && !(reply instanceof String)) {
            refuse(event, "invalid_reply_address", null);
            return;
        }
        // The client's headers are dropped: the connection header is the bridge's word, never the client's.
        raw.put("headers", new JsonObject().put(ClientConnections.CONNECTION_HEADER, socket.connection));
        event.complete(true);
    }

    private void register(BridgeEvent event) {
        Socket socket = sockets.get(event.socket());
        JsonObject raw = event.getRawMessage();
        String address = raw.getString("address");
        if (socket == null) {
            event.complete(false);
            return;
        }
        if (!authorized(raw)) {
            refuse(event, "unauthorized", address);
            return;
        }
        // Other addresses are the bridge's to refuse (access_denied) or register (the console feed).
        if (Addresses.isClient(address)
                && address.length() <= MAX_ADDRESS_LENGTH
                && !socket.addresses.contains(address)) {
            if (socket.addresses.size() >= MAX_REGISTRATIONS) {
                refuse(event, "too_many_registrations", address);
                return;
            }
            // One socket per address: two would take turns receiving the tokens of one stream.
            if (!clients.register(socket.connection, address)) {
                refuse(event, "address_in_use", address);
                return;
            }
            socket.addresses.add(address);
        }
        event.complete(true);
    }

    private void registered(BridgeEvent event) {
        Socket socket = sockets.get(event.socket());
        if (socket != null
                && !socket.console
                && Addresses.CONSOLE_CLUSTER.equals(event.getRawMessage().getString("address"))) {
            socket.console = true;
            if (feed != null) {
                feed.listenerAdded();
            }
        }
    }

    private void unregister(BridgeEvent event) {
        Socket socket = sockets.get(event.socket());
        String address = event.getRawMessage().getString("address");
        if (socket == null || address == null) {
            return;
        }
        if (socket.addresses.remove(address)) {
            clients.unregister(socket.connection, address); // ends the requests streaming there
        }
        if (socket.console && Addresses.CONSOLE_CLUSTER.equals(address)) {
            socket.console = false;
            if (feed != null) {
                feed.listenerRemoved();
            }
        }
    }

    private void release(SockJSSocket sockJs) {
        Socket socket = sockets.remove(sockJs);
        if (socket == null) {
            return;
        }
        if (socket.console && feed != null) {
            feed.listenerRemoved();
        }
        clients.close(socket.connection); // cancels everything it started
    }

    /** With {@code http.api-keys} set, a frame's headers must carry {@code authorization: Bearer <key>}. */
    private boolean authorized(JsonObject raw) {
        if (keys.open()) {
            return true;
        }
        if (!(raw.getValue("headers") instanceof JsonObject headers)) {
            return false;
        }
        for (String name : headers.fieldNames()) {
            if (name.equalsIgnoreCase("authorization") && headers.getValue(name) instanceof String value) {
                return keys.accepts(value);
            }
        }
        return false;
    }

    /**
     * Refuses the frame with an {@code err} naming why — addressed to the address a register named, so
     * the Vert.x client hands it to that address's handler — and lets the bridge refuse it too (it then
     * answers its generic {@code rejected}).
     */
    private void refuse(BridgeEvent event, String code, String address) {
        JsonObject err = new JsonObject()
                .put("type", "err")
                .put("body", code)
                .put("failureType", code)
                .put("message", detail(code));
        if (address != null) {
            err.put("address", address);
        }
        event.socket().write(err.encode());
        event.complete(false);
    }

    private static String detail(String code) {
        return switch (code) {
            case "unauthorized" -> "http.api-keys is set: send 'authorization: Bearer <key>' in every frame's headers";
            case "invalid_reply_address" -> "'replyAddress' must be a string";
            case "too_many_registrations" -> "a socket may register at most " + MAX_REGISTRATIONS + " client addresses";
            case "address_in_use" -> "another connection receives on this address: pick a fresh tandem.client.<uuid>";
            default -> code;
        };
    }
}
