package dev.tandem.bridge.client;

import dev.tandem.api.ApiException;
import dev.tandem.api.CompletionCall;
import dev.tandem.api.OpenAiRequestParser;
import dev.tandem.protocol.Addresses;
import dev.tandem.router.RequestRouter;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The requests bridge clients run on this router. Consumes {@link Addresses#GENERATE} and
 * {@link Addresses#CANCEL} with local consumers — a client is served by the router it is connected
 * to — parses each body with the HTTP API's parser off the event loop, submits it to the
 * {@link RequestRouter} and streams it through a {@link BridgeClientSink}. Everything a connection started
 * ends when the connection closes or gives up the address its tokens go to. Runs on the router's
 * event loop, so its maps need no locks.
 */
final class ClientRequests implements ClientConnections.Listener {
    /** Requests one connection may have running, as on a WebSocket; one client cannot take the whole router. */
    static final int MAX_IN_FLIGHT_PER_CONNECTION = 64;

    private final Vertx vertx;
    private final OpenAiRequestParser parser;
    private final RequestRouter router;
    private final ClientConnections clients;
    /** Requests by id, from acceptance to their last frame. */
    private final Map<String, BridgeClientSink> byId = new HashMap<>();
    /** Requests by the connection that started them, from receipt to their last frame. */
    private final Map<String, Set<BridgeClientSink>> byConnection = new HashMap<>();

    private final List<MessageConsumer<Object>> consumers = new ArrayList<>();
    /** Requests received and not yet ended, whoever sent them. */
    private int live;

    ClientRequests(Vertx vertx, OpenAiRequestParser parser, RequestRouter router, ClientConnections clients) {
        this.vertx = vertx;
        this.parser = parser;
        this.router = router;
        this.clients = clients;
        clients.listener(this);
    }

    Future<Void> start() {
        consumers.add(vertx.eventBus().localConsumer(Addresses.GENERATE, this::onGenerate));
        consumers.add(vertx.eventBus().localConsumer(Addresses.CANCEL, this::onCancel));
        return Future.all(consumers.stream().map(MessageConsumer::completion).toList())
                .mapEmpty();
    }

    Future<Void> stop() {
        return Future.all(consumers.stream().map(MessageConsumer::unregister).toList())
                .mapEmpty();
    }

    private void onGenerate(Message<Object> m) {
        if (!(m.body() instanceof JsonObject body)) {
            m.fail(400, "the body must be a JSON object: a completions or chat request plus 'stream_to'");
            return;
        }
        Object to = body.remove("stream_to");
        if (!(to instanceof String streamTo) || !Addresses.isClient(streamTo)) {
            m.fail(
                    400,
                    "'stream_to' must be the address your tokens go to, under " + Addresses.CLIENT_PREFIX + " (e.g. "
                            + Addresses.CLIENT_PREFIX + "<uuid>), registered on this connection first");
            return;
        }
        String connection = m.headers().get(ClientConnections.CONNECTION_HEADER);
        if (connection != null && !clients.receivesOn(connection, streamTo)) {
            m.fail(
                    400,
                    "'stream_to' " + streamTo + " is not registered on this connection: send "
                            + "{\"type\": \"register\", \"address\": \"" + streamTo + "\"} first");
            return;
        }
        if (connection != null && running(connection) >= MAX_IN_FLIGHT_PER_CONNECTION) {
            m.fail(
                    429,
                    "this connection already has " + MAX_IN_FLIGHT_PER_CONNECTION
                            + " requests running; wait for one to finish");
            return;
        }
        BridgeClientSink sink = new BridgeClientSink(this, vertx.eventBus(), m, streamTo, connection);
        live++;
        if (connection != null) {
            byConnection.computeIfAbsent(connection, c -> new HashSet<>()).add(sink);
        }
        // Tokenizing is model work: off the event loop unless it is tiny, like the HTTP endpoints.
        parser.parse(vertx, body, () -> parser.parseStreaming(body, null)).onComplete(ar -> {
            if (sink.ended()) {
                return; // its connection closed meanwhile
            }
            if (ar.failed()) {
                sink.refuse(ApiException.from(ar.cause()));
                return;
            }
            CompletionCall call = ar.result();
            // submit may end the request at once (e.g. overload): the sink has released itself by then.
            sink.attach(
                    router.submit(call.generation(), sink), call.generation().promptTokens().length);
        });
    }

    private void onCancel(Message<Object> m) {
        String id = m.body() instanceof JsonObject body ? requestId(body.getValue("id")) : null;
        if (id == null) {
            m.fail(400, "the body must be {\"id\": <the id the generate reply carried>}");
            return;
        }
        BridgeClientSink sink = byId.get(id);
        // Only the connection that started a request may cancel it; to any other the id is unknown.
        boolean cancelled =
                sink != null && Objects.equals(sink.connection(), m.headers().get(ClientConnections.CONNECTION_HEADER));
        if (cancelled) {
            sink.cancel();
        }
        // An unknown id is not an error: the cancel may have crossed the request's last frame.
        m.reply(new JsonObject().put("id", id).put("cancelled", cancelled));
    }

    /** A request id as a client may send it back: the string from the reply, or that number. */
    private static String requestId(Object value) {
        if (value instanceof String s && !s.isEmpty()) {
            return s;
        }
        if (value instanceof Integer || value instanceof Long || value instanceof BigInteger) {
            return value.toString();
        }
        return null;
    }

    private int running(String connection) {
        Set<BridgeClientSink> sinks = byConnection.get(connection);
        return sinks == null ? 0 : sinks.size();
    }

    // ---- called by the sinks ----

    void accepted(BridgeClientSink sink) {
        byId.put(sink.id(), sink);
    }

    /** The request has sent its last frame: forget it. */
    void release(BridgeClientSink sink) {
        live--;
        if (sink.id() != null) {
            byId.remove(sink.id(), sink);
        }
        Set<BridgeClientSink> sinks = sink.connection() == null ? null : byConnection.get(sink.connection());
        if (sinks != null) {
            sinks.remove(sink);
            if (sinks.isEmpty()) {
                byConnection.remove(sink.connection());
            }
        }
    }

    // ---- connection events ----

    @Override
    public void addressDropped(String connection, String address) {
        for (BridgeClientSink sink : snapshot(connection)) {
            if (sink.streamTo().equals(address)) {
                sink.abandon("'stream_to' " + address + " was unregistered before the request started");
            }
        }
    }

    @Override
    public void connectionClosed(String connection) {
        for (BridgeClientSink sink : snapshot(connection)) {
            sink.abandon("the connection closed");
        }
    }

    private List<BridgeClientSink> snapshot(String connection) {
        Set<BridgeClientSink> sinks = byConnection.get(connection);
        return sinks == null ? List.of() : new ArrayList<>(sinks);
    }

    /** Requests received and not yet ended. */
    int live() {
        return live;
    }
}
