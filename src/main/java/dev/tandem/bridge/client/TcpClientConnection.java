package dev.tandem.bridge.client;

import dev.tandem.api.ApiKeys;
import dev.tandem.bridge.BridgeFrames;
import dev.tandem.bridge.BridgeSocket;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetSocket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One client of the TCP bridge: checks its frames against {@link ClientPermissions}, forwards its
 * sends to this router's event bus, and writes back replies and the messages of the addresses it
 * registered. A bad frame gets an {@code err} frame and harms nothing else ({@link BridgeSocket}).
 * When the connection closes its registrations go, and {@link ClientConnections} ends its requests.
 */
final class TcpClientConnection implements BridgeSocket.Handler {
    /** Addresses one connection may receive on; a client needs one. */
    static final int MAX_REGISTRATIONS = 16;

    private final BridgeSocket socket;
    private final EventBus eventBus;
    private final ClientConnections clients;
    private final long replyTimeoutMs;
    private final String id;
    private final Consumer<TcpClientConnection> onClosed;
    private final ApiKeys keys;
    private final Map<String, MessageConsumer<Object>> consumers = new HashMap<>();

    /**
     * @param replyTimeoutMs how long a send waits for its reply; longer than the router's request
     *                       timeout, so a request that fails before it starts is answered with its own error
     */
    TcpClientConnection(
            NetSocket socket,
            EventBus eventBus,
            ClientConnections clients,
            ApiKeys keys,
            int maxFrameBytes,
            long replyTimeoutMs,
            Consumer<TcpClientConnection> onClosed) {
        this.eventBus = eventBus;
        this.clients = clients;
        this.replyTimeoutMs = replyTimeoutMs;
        this.onClosed = onClosed;
        this.keys = keys;
        this.id = clients.open();
        this.socket = new BridgeSocket(socket, maxFrameBytes, id, this);
    }

    void start() {
        socket.start();
    }

    void close() {
        socket.close();
    }

    void closeIfTimedOut(long now, long idleMs, long frameReadMs) {
        socket.closeIfTimedOut(now, idleMs, frameReadMs);
    }

    @Override
    public void onFrame(String type, String address, JsonObject frame, String replyAddress) {
        // As on SockJS: with http.api-keys set every frame carries a key, so no frame acts without one.
        if (!keys.open() && !keys.accepts(authorization(frame.getValue("headers")))) {
            write(BridgeFrames.err(
                    "unauthorized",
                    "http.api-keys is set: send \"headers\": {\"authorization\": \"Bearer <key>\"} in every frame",
                    replyAddress));
            return;
        }
        switch (type) {
            case "send" -> forward(true, address, frame.getValue("body"), replyAddress);
            case "publish" -> forward(false, address, frame.getValue("body"), replyAddress);
            case "register" -> register(address, replyAddress);
            default -> unregister(address, replyAddress);
        }
    }

    /** The frame's {@code authorization} header (any case), or null. */
    private static String authorization(Object headers) {
        if (headers instanceof JsonObject h) {
            for (String name : h.fieldNames()) {
                if (name.equalsIgnoreCase("authorization") && h.getValue(name) instanceof String value) {
                    return value;
                }
            }
        }
        return null;
    }

    private void forward(boolean send, String address, Object body, String replyAddress) {
        if (!ClientPermissions.inbound(address)) {
            write(BridgeFrames.err(
                    "access_denied",
                    "clients may send only to tandem.generate and tandem.cancel, not '" + address + "'",
                    replyAddress));
            return;
        }
        if (body != null && !(body instanceof JsonObject)) {
            write(BridgeFrames.err("invalid_body", "'body' must be a JSON object", replyAddress));
            return;
        }
        // Local only: a client is served by the router it is connected to. Client headers are not
        // forwarded; the connection header is the bridge's word, never the client's.
        DeliveryOptions options =
                new DeliveryOptions().setLocalOnly(true).addHeader(ClientConnections.CONNECTION_HEADER, id);
        if (!send) {
            eventBus.publish(address, body, options);
        } else if (replyAddress == null) {
            eventBus.send(address, body, options);
        } else {
            eventBus.request(address, body, options.setSendTimeout(replyTimeoutMs))
                    .onComplete(ar -> write(BridgeFrames.replyTo(replyAddress, address, ar)));
        }
    }

    private void register(String address, String replyAddress) {
        if (!ClientPermissions.outbound(address)) {
            write(BridgeFrames.err(
                    "access_denied",
                    "clients may receive only on addresses under tandem.client., not '" + address + "'",
                    replyAddress));
            return;
        }
        if (consumers.containsKey(address)) {
            return; // registering twice is harmless
        }
        if (consumers.size() >= MAX_REGISTRATIONS) {
            write(BridgeFrames.err(
                    "too_many_registrations",
                    "a connection may register at most " + MAX_REGISTRATIONS + " addresses",
                    replyAddress));
            return;
        }
        if (!clients.register(id, address)) {
            write(BridgeFrames.err(
                    "address_in_use",
                    "another connection receives on '" + address + "': pick a fresh address (tandem.client.<uuid>)",
                    replyAddress));
            return;
        }
        // Local: only this router sends to it (pushes are local-only), and nothing is written to the cluster.
        consumers.put(address, eventBus.localConsumer(address, this::deliver));
    }

    private void unregister(String address, String replyAddress) {
        MessageConsumer<Object> consumer = consumers.remove(address);
        if (consumer == null) {
            write(BridgeFrames.err(
                    "unknown_address", "this connection has not registered '" + address + "'", replyAddress));
            return;
        }
        consumer.unregister();
        clients.unregister(id, address);
    }

    private void deliver(Message<Object> m) {
        write(BridgeFrames.message(m.address(), m.body(), m.headers(), m.isSend()));
    }

    private void write(JsonObject frame) {
        socket.write(frame);
    }

    @Override
    public void onClosed() {
        List<MessageConsumer<Object>> left = new ArrayList<>(consumers.values());
        consumers.clear();
        left.forEach(MessageConsumer::unregister);
        clients.close(id);
        onClosed.accept(this);
    }
}
