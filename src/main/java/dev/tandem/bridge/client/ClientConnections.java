package dev.tandem.bridge.client;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The bridge connections open on this router and the client addresses each has registered. A
 * generate request names its connection (the bridge sets {@link #CONNECTION_HEADER}; a client cannot),
 * so tokens go only to an address that connection receives on, and everything a connection started
 * ends when it closes or gives up that address. Confined to the router's event loop.
 */
final class ClientConnections {
    /** Header the bridge puts on every message it forwards, naming the connection it came from. */
    static final String CONNECTION_HEADER = "tandem-bridge-connection";

    /** What the requests of a connection must hear about. */
    interface Listener {
        /** The connection no longer receives on {@code address}: requests streaming there have no reader. */
        void addressDropped(String connection, String address);

        void connectionClosed(String connection);
    }

    private final Map<String, Set<String>> registered = new HashMap<>();
    /** Which connection receives on each client address: one, or a send would alternate between them. */
    private final Map<String, String> owners = new HashMap<>();

    private Listener listener = new Listener() {
        @Override
        public void addressDropped(String connection, String address) {}

        @Override
        public void connectionClosed(String connection) {}
    };

    void listener(Listener listener) {
        this.listener = listener;
    }

    /** A new connection; its id is unguessable, though only the bridge ever sees it. */
    String open() {
        String id = UUID.randomUUID().toString();
        registered.put(id, new HashSet<>());
        return id;
    }

    boolean isOpen(String connection) {
        return registered.containsKey(connection);
    }

    /** Records that {@code connection} receives on {@code address}; false if another connection already does. */
    boolean register(String connection, String address) {
        Set<String> addresses = registered.get(connection);
        if (addresses == null) {
            return false;
        }
        String owner = owners.putIfAbsent(address, connection);
        if (owner != null && !owner.equals(connection)) {
            return false;
        }
        addresses.add(address);
        return true;
    }

    void unregister(String connection, String address) {
        Set<String> addresses = registered.get(connection);
        if (addresses != null && addresses.remove(address)) {
            owners.remove(address, connection);
            listener.addressDropped(connection, address);
        }
    }

    boolean receivesOn(String connection, String address) {
        Set<String> addresses = registered.get(connection);
        return addresses != null && addresses.contains(address);
    }

    void close(String connection) {
        Set<String> addresses = registered.remove(connection);
        if (addresses != null) {
            for (String address : addresses) {
                owners.remove(address, connection);
            }
            listener.connectionClosed(connection);
        }
    }

    int openConnections() {
        return registered.size();
    }
}
