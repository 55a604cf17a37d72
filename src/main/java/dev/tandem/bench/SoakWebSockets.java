package dev.tandem.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The soak's WebSocket traffic on {@code /v1/stream}: a few long-lived sockets, each carrying many
 * requests at once, as a real client keeps them. A request goes to the open socket with the fewest
 * running; a socket takes at most {@link #PER_SOCKET} (the server refuses a 65th), so when all are full
 * another is opened. A socket that closes fails what ran on it and is replaced on demand. Everything
 * runs on the traffic's one context.
 */
final class SoakWebSockets {
    static final int PER_SOCKET = 64;
    /** Under the server's idle timeout (2 minutes by default), so a quiet socket stays open. */
    private static final long PING_MS = 30_000;

    private final Vertx vertx;
    private final WebSocketClient client;
    private final SoakEndpoint endpoint;
    private final List<Socket> sockets = new ArrayList<>();
    private Future<Socket> connecting;
    private long pinger = -1;
    private long nextId;
    private int opened;

    SoakWebSockets(Vertx vertx, WebSocketClient client, SoakEndpoint endpoint) {
        this.vertx = vertx;
        this.client = client;
        this.endpoint = endpoint;
    }

    /** Opens {@code count} sockets before the traffic starts, and pings them from then on. */
    Future<Void> open(int count) {
        pinger = vertx.setPeriodic(PING_MS, t -> sockets.forEach(s -> s.ws.writePing(Buffer.buffer("soak"))));
        Future<Socket> chain = Future.succeededFuture();
        for (int i = 0; i < count; i++) {
            chain = chain.compose(s -> connect());
        }
        return chain.mapEmpty();
    }

    /** Sockets opened in all, replacements and additions included. */
    int opened() {
        return opened;
    }

    SoakCall send(SoakRequest r, JsonObject body) {
        SoakCall call = new SoakCall();
        String id = "s" + nextId++;
        socketWithRoom().onFailure(e -> call.end(SoakHttp.transport(e))).onSuccess(s -> {
            if (call.future().isComplete()) {
                return; // timed out while a socket was opening: never sent
            }
            Running running = new Running(r, call);
            s.running.put(id, running);
            call.onStop(() -> s.cancel(id, running));
            s.ws.writeTextMessage(body.copy().put("id", id).encode()).onFailure(e -> {
                s.running.remove(id);
                call.end(SoakHttp.transport(e));
            });
        });
        return call;
    }

    Future<Void> close() {
        vertx.cancelTimer(pinger);
        List<Future<Void>> closing = new ArrayList<>();
        for (Socket s : List.copyOf(sockets)) {
            closing.add(s.ws.close());
        }
        return Future.join(closing).mapEmpty();
    }

    private Future<Socket> socketWithRoom() {
        Socket best = null;
        for (Socket s : sockets) {
            if (s.running.size() < PER_SOCKET && (best == null || s.running.size() < best.running.size())) {
                best = s;
            }
        }
        if (best != null) {
            return Future.succeededFuture(best);
        }
        if (connecting == null) {
            connecting = connect().onComplete(x -> connecting = null);
        }
        // Whoever waited for the new socket looks again: it may have filled up meanwhile.
        return connecting.compose(s -> socketWithRoom());
    }

    private Future<Socket> connect() {
        return client.connect(endpoint.webSocket()).map(ws -> {
            Socket s = new Socket(ws);
            ws.textMessageHandler(s::onMessage);
            ws.closeHandler(v -> s.closed());
            sockets.add(s);
            opened++;
            return s;
        });
    }

    /** A request on a socket: its call, and what its frames told so far. */
    private static final class Running {
        final SoakRequest request;
        final SoakCall call;
        final StringBuilder text;
        double firstTokenMs = Double.NaN;
        int chunks;
        boolean cancelSent;

        Running(SoakRequest request, SoakCall call) {
            this.request = request;
            this.call = call;
            this.text = request.keepsText() ? new StringBuilder() : null;
        }
    }

    private final class Socket {
        final WebSocket ws;
        /** Until its done or error frame, even once its call ended (a timeout): the server still counts it. */
        final Map<String, Running> running = new HashMap<>();

        Socket(WebSocket ws) {
            this.ws = ws;
        }

        void cancel(String id, Running r) {
            if (!r.cancelSent && !ws.isClosed()) {
                r.cancelSent = true;
                ws.writeTextMessage(
                        new JsonObject().put("id", id).put("type", "cancel").encode());
            }
        }

        void onMessage(String message) {
            JsonObject frame;
            try {
                frame = new JsonObject(message);
            } catch (DecodeException e) {
                return; // not ours to judge: the request it belonged to times out if it never ends
            }
            String id = String.valueOf(frame.getValue("id"));
            Running r = running.get(id);
            if (r == null) {
                return;
            }
            SoakHttp.guarded(r.call, () -> onFrame(id, r, frame));
        }

        private void onFrame(String id, Running r, JsonObject frame) {
            switch (frame.getString("type", "")) {
                case "tokens" -> tokens(id, r, frame);
                case "done" -> {
                    running.remove(id);
                    r.call.end(done(r, frame));
                }
                case "error" -> {
                    running.remove(id);
                    JsonObject error = frame.getJsonObject("error", new JsonObject());
                    r.call.end(SoakResult.failed(
                            SoakError.ofStatus(frame.getInteger("status", 500)),
                            "WebSocket error " + frame.getInteger("status") + " " + error.getString("message")));
                }
                default -> {} // accepted
            }
        }

        private void tokens(String id, Running r, JsonObject frame) {
            String chunk = frame.getString("text", "");
            if (chunk.isEmpty()) {
                return;
            }
            if (r.chunks++ == 0) {
                r.firstTokenMs = r.call.millisSinceSent();
            }
            if (r.text != null) {
                r.text.append(chunk);
            }
            if (r.request.cancelAfterChunks() > 0 && r.chunks >= r.request.cancelAfterChunks()) {
                cancel(id, r);
            }
        }

        private SoakResult done(Running r, JsonObject frame) {
            String finish = frame.getString("finish_reason");
            if ("cancelled".equals(finish)) {
                return r.cancelSent
                        ? SoakResult.cancelled(r.firstTokenMs)
                        : SoakResult.failed(SoakError.STREAM, "cancelled by the server: " + frame.encode());
            }
            if (frame.getJsonObject("usage") == null) {
                return SoakResult.failed(SoakError.STREAM, "done without usage: " + frame.encode());
            }
            return SoakResult.completed(
                    r.firstTokenMs, r.call.millisSinceSent(), r.text == null ? null : r.text.toString());
        }

        void closed() {
            sockets.remove(this);
            for (Running r : running.values()) {
                r.call.end(SoakResult.failed(SoakError.TRANSPORT, "the WebSocket closed under the request"));
            }
            running.clear();
        }
    }
}
