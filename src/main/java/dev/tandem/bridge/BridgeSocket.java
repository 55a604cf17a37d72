package dev.tandem.bridge;

import dev.tandem.api.StrictJson;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetSocket;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One socket of a TCP bridge, whoever is on the other end: cuts the stream into frames, answers
 * {@code ping}, refuses frames that are not well-formed bridge frames with an {@code err} frame, and
 * writes back without buffering for a peer that does not read. What a well-formed frame means is the
 * {@link Handler}'s business (a client or a worker connection). Runs on the socket's event loop.
 */
public final class BridgeSocket implements BridgeFrameReader.Listener {
    private static final Logger LOG = Logger.getLogger(BridgeSocket.class.getName());
    /** Bytes written and not yet taken by the peer after which it is cut off, not buffered for. */
    public static final long MAX_UNREAD_BYTES = 16L << 20;

    private static final Set<String> TYPES = Set.of("send", "publish", "register", "unregister", "ping");

    /** What a bridge does with its frames. */
    public interface Handler {
        /**
         * A frame of type send, publish, register or unregister with a non-empty address; {@code replyAddress}
         * is null when it has none. A refusal should be addressed to {@code replyAddress}.
         */
        void onFrame(String type, String address, JsonObject frame, String replyAddress);

        /** The socket closed (either side); called once. */
        void onClosed();
    }

    private final NetSocket socket;
    private final int maxFrameBytes;
    private final String id;
    private final Handler handler;
    private final BridgeFrameReader reader;
    private long unreadBytes;
    private long lastFrameNanos = System.nanoTime();
    private boolean paused;
    private boolean closed;

    public BridgeSocket(NetSocket socket, int maxFrameBytes, String id, Handler handler) {
        this.socket = socket;
        this.maxFrameBytes = maxFrameBytes;
        this.id = id;
        this.handler = handler;
        this.reader = new BridgeFrameReader(maxFrameBytes, this);
    }

    public void start() {
        socket.handler(reader);
        socket.drainHandler(v -> {
            if (paused) {
                paused = false;
                socket.resume();
            }
        });
        socket.closeHandler(v -> onClose());
        socket.exceptionHandler(e -> LOG.log(Level.FINE, "bridge connection " + id + " failed", e));
    }

    public String id() {
        return id;
    }

    public boolean closed() {
        return closed;
    }

    /** When the peer last sent a frame (any frame, ping included) or took one: a liveness signal. */
    public long lastFrameNanos() {
        return lastFrameNanos;
    }

    public void close() {
        socket.close();
    }

    /**
     * Closes the connection, after an {@code err} frame saying why, when its peer has been silent for
     * {@code idleMs} (sending no frame, taking none) or has taken more than {@code frameReadMs} to send one
     * frame; 0 turns either off. Called by the bridge's periodic sweep. True when it closed.
     */
    public boolean closeIfTimedOut(long now, long idleMs, long frameReadMs) {
        if (closed) {
            return false;
        }
        long started = reader.frameStartNanos();
        if (frameReadMs > 0 && started != 0 && now - started > TimeUnit.MILLISECONDS.toNanos(frameReadMs)) {
            closeWith("frame_timeout", "a frame took longer than " + frameReadMs + " ms to arrive; closing");
            return true;
        }
        if (idleMs > 0 && now - lastFrameNanos > TimeUnit.MILLISECONDS.toNanos(idleMs)) {
            closeWith("idle_timeout", "no frame for " + idleMs + " ms (send a ping to stay connected); closing");
            return true;
        }
        return false;
    }

    /** An err frame, then the close: a client protocol problem, logged as a WARN with the peer. */
    public void closeWith(String code, String detail) {
        LOG.warning("bridge connection " + id + " from " + socket.remoteAddress() + " closed: " + code);
        write(BridgeFrames.err(code, detail, null));
        socket.close();
    }

    @Override
    public void onFrame(Buffer payload) {
        if (closed) {
            return;
        }
        lastFrameNanos = System.nanoTime();
        try {
            dispatch(payload);
        } catch (RuntimeException e) {
            // A bug must cost this frame only, not the connection or the other peers.
            LOG.log(Level.WARNING, "bridge frame failed on connection " + id, e);
            write(BridgeFrames.err("internal_error", "internal error: " + e, null));
        }
    }

    @Override
    public void onOversized(long length) {
        write(BridgeFrames.err(
                "frame_too_large",
                "a frame of " + length + " bytes is over the limit of " + maxFrameBytes + " bytes; it was skipped",
                null));
    }

    @Override
    public void onUnframed(int length) {
        write(BridgeFrames.err(
                "invalid_frame_length",
                "a frame length of " + length
                        + " is not a frame: each frame is a 4-byte big-endian length then that many bytes of JSON; closing",
                null));
        socket.close();
    }

    private void dispatch(Buffer payload) {
        Object parsed;
        try {
            parsed = StrictJson.decode(payload);
        } catch (DecodeException e) {
            write(BridgeFrames.err("invalid_json", "the frame is not valid JSON: " + e.getMessage(), null));
            return;
        }
        if (!(parsed instanceof JsonObject frame)) {
            write(BridgeFrames.err("invalid_json", "a frame must be a JSON object", null));
            return;
        }
        // Read first: every refusal below is addressed to it, so a peer waiting for that reply hears at once.
        Object reply = frame.getValue("replyAddress");
        String replyAddress = reply instanceof String s ? s : null;
        if (reply != null && replyAddress == null) {
            write(BridgeFrames.err("invalid_frame", "'replyAddress' must be a string", null));
            return;
        }
        Object type = frame.getValue("type");
        if (!(type instanceof String t) || !TYPES.contains(t)) {
            write(BridgeFrames.err(
                    type == null ? "missing_type" : "unknown_type",
                    "'type' must be one of " + "send, publish, register, unregister, ping; got " + Json.encode(type),
                    replyAddress));
            return;
        }
        if (t.equals("ping")) {
            write(BridgeFrames.pong());
            return;
        }
        Object address = frame.getValue("address");
        if (!(address instanceof String a) || a.isEmpty()) {
            write(BridgeFrames.err("missing_address", "a '" + t + "' frame needs an 'address' string", replyAddress));
            return;
        }
        handler.onFrame(t, a, frame, replyAddress);
    }

    public void write(JsonObject frame) {
        if (closed) {
            return;
        }
        Buffer data = BridgeFrames.encode(frame);
        if (unreadBytes + data.length() > MAX_UNREAD_BYTES) {
            LOG.warning("bridge connection " + id + " closed: its peer left " + unreadBytes + " bytes unread");
            socket.close();
            onClose();
            return;
        }
        unreadBytes += data.length();
        socket.write(data).onComplete(ar -> {
            unreadBytes -= data.length();
            // A peer that takes what it is sent is alive, even while its own frames wait unread behind
            // backpressure (pause() below): only a peer that neither reads nor writes goes idle.
            lastFrameNanos = System.nanoTime();
        });
        // Stop reading from a peer that does not read: its refusals must not pile up here.
        if (!paused && socket.writeQueueFull()) {
            paused = true;
            socket.pause();
        }
    }

    private void onClose() {
        if (closed) {
            return;
        }
        closed = true;
        handler.onClosed();
    }
}
