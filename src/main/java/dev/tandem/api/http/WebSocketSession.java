package dev.tandem.api.http;

import dev.tandem.api.ApiException;
import dev.tandem.api.CompletionCall;
import dev.tandem.api.ErrorBodies;
import dev.tandem.api.OpenAiRequestParser;
import dev.tandem.api.StrictJson;
import dev.tandem.api.UnpairedSurrogates;
import dev.tandem.router.RequestClass;
import dev.tandem.router.RequestRouter;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.http.WebSocketFrame;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One {@code /v1/stream} socket: assembles text messages, starts and cancels the requests they
 * carry, and ends every request still running when the socket closes. A bad message gets an error
 * frame and never harms the socket or its other requests. Runs on the router's event loop, like
 * {@link RequestRouter}, so its maps need no locks.
 */
final class WebSocketSession {
    private static final Logger LOG = Logger.getLogger(WebSocketSession.class.getName());
    /** Requests one socket may have running; one client cannot take the whole router. */
    static final int MAX_IN_FLIGHT = 64;

    private static final int MAX_ID_CHARS = 256;

    private final ServerWebSocket ws;
    private final OpenAiRequestParser parser;
    private final RequestRouter router;
    private final long maxMessageBytes;
    private final Vertx vertx;
    private final long readTimeoutMs;
    private final String sessionHeader;
    /** Running requests by id key ({@link #key}); an entry lives from submit to its last frame. */
    private final Map<String, WebSocketSink> running = new HashMap<>();
    /** Requests holding tokens back until the write queue drains, oldest first. */
    private final Set<WebSocketSink> backlog = new LinkedHashSet<>();
    /** The text message being assembled from frames, or null. */
    private Buffer message;
    /** True while the rest of a binary or over-limit message is being skipped. */
    private boolean skipping;

    private boolean paused;
    private boolean closed;
    private final java.util.function.Function<String, RequestClass> classify;
    /** The timer bounding the message being assembled from frames, or -1 between messages. */
    private long messageTimer = -1;

    /**
     * @param vertx    for the timer that bounds a fragmented message ({@code readTimeoutMs}; 0 = none); may be
     *                 null when {@code readTimeoutMs} is 0
     * @param classify who a message's request is from, given its {@code user} (the upgrade's headers decided
     *                 the rest)
     */
    WebSocketSession(
            Vertx vertx,
            ServerWebSocket ws,
            OpenAiRequestParser parser,
            RequestRouter router,
            long maxMessageBytes,
            long readTimeoutMs,
            String sessionHeader,
            java.util.function.Function<String, RequestClass> classify) {
        this.classify = classify;
        this.vertx = vertx;
        this.readTimeoutMs = readTimeoutMs;
        this.ws = ws;
        this.parser = parser;
        this.router = router;
        this.maxMessageBytes = maxMessageBytes;
        this.sessionHeader = sessionHeader;
    }

    void start() {
        // Frames, not textMessageHandler: the size limit must be max-body-bytes, checked as bytes arrive.
        ws.frameHandler(this::onFrame);
        ws.drainHandler(v -> onDrain());
        ws.closeHandler(v -> onClose());
        ws.exceptionHandler(this::onException);
    }

    private void onFrame(WebSocketFrame frame) {
        if (closed) {
            return;
        }
        if (frame.isText() || frame.isBinary()) {
            message = null;
            skipping = false;
            if (frame.isBinary()) {
                skipping = true;
                sendError(
                        null,
                        new ApiException(
                                415,
                                "invalid_request_error",
                                null,
                                "unsupported_frame",
                                "binary frames are not supported: send each request as a JSON text frame"));
            } else {
                message = Buffer.buffer();
            }
        } else if (!frame.isContinuation()) {
            return; // ping, pong and close are Vert.x's business
        }
        if (!skipping && message != null) {
            message.appendBuffer(frame.binaryData());
            if (message.length() > maxMessageBytes) {
                message = null;
                skipping = true;
                sendError(
                        null,
                        new ApiException(
                                413,
                                "invalid_request_error",
                                null,
                                "request_too_large",
                                "the message is larger than " + maxMessageBytes + " bytes"));
            }
        }
        if (frame.isFinal()) {
            Buffer whole = message;
            message = null;
            skipping = false;
            stopMessageTimer();
            if (whole != null) {
                try {
                    onMessage(whole);
                } catch (RuntimeException e) {
                    // A bug must cost this message only, not the socket or its other requests.
                    LOG.log(Level.WARNING, "WebSocket message from " + ws.remoteAddress() + " failed", e);
                    sendError(null, new ApiException(500, "server_error", null, "internal_error", "internal error"));
                }
            }
        } else if (messageTimer == -1 && readTimeoutMs > 0) {
            // A client trickling continuation frames holds a buffer of up to max-body-bytes: bound the time.
            messageTimer = vertx.setTimer(readTimeoutMs, t -> {
                messageTimer = -1;
                LOG.warning("WebSocket message from " + ws.remoteAddress() + " not complete within " + readTimeoutMs
                        + " ms (http.request-read-timeout-ms); closing with 1008");
                closeWith(1008, "message not complete within " + readTimeoutMs + " ms");
            });
        }
        // Stop reading while the client is not reading what we send; error frames must not pile up.
        if (!paused && ws.writeQueueFull()) {
            paused = true;
            ws.pause();
        }
    }

    /**
     * A frame Netty's decoder refused (over the frame limit, RSV bits without an extension, a bad opcode):
     * the stream is lost, so the socket closes — with the status the decoder names (1009 message too big,
     * 1002 protocol error) and a reason, not by dropping the TCP connection.
     */
    private void onException(Throwable e) {
        if (e instanceof CorruptedWebSocketFrameException bad) {
            LOG.warning("WebSocket protocol error from " + ws.remoteAddress() + ": " + e.getMessage());
            WebSocketCloseStatus status = bad.closeStatus();
            closeWith(status == null ? 1002 : status.code(), e.getMessage());
        } else {
            LOG.log(Level.FINE, "WebSocket error from " + ws.remoteAddress(), e);
        }
    }

    /** Closes with a status and a reason (cut to the 123 bytes a close frame holds). */
    private void closeWith(int status, String reason) {
        if (!ws.isClosed()) {
            String r = reason == null ? "" : reason;
            ws.close((short) status, r.length() > 100 ? r.substring(0, 100) : r);
        }
    }

    private void onMessage(Buffer bytes) {
        // RFC 6455: a text message that is not UTF-8 fails the connection with 1007.
        String text = StrictJson.utf8(bytes);
        if (text == null) {
            LOG.warning("WebSocket message from " + ws.remoteAddress() + " is not UTF-8; closing with 1007");
            closeWith(1007, "a text message must be valid UTF-8");
            return;
        }
        Object parsed;
        try {
            parsed = Json.decodeValue(text);
        } catch (DecodeException e) {
            sendError(
                    null,
                    new ApiException(
                            400,
                            "invalid_request_error",
                            null,
                            "invalid_json",
                            "the message is not valid JSON: " + e.getMessage()));
            return;
        }
        if (!(parsed instanceof JsonObject frame)) {
            sendError(
                    null,
                    new ApiException(
                            400, "invalid_request_error", null, "invalid_json", "each message must be a JSON object"));
            return;
        }
        Object id = frame.getValue("id");
        if (id instanceof String s && UnpairedSurrogates.in(s)) {
            sendError(null, UnpairedSurrogates.invalid("id")); // it could not be echoed: UTF-8 cannot carry it
            return;
        }
        String key = key(id);
        if (key == null) {
            sendError(
                    null,
                    id == null
                            ? ApiException.invalid("id", "'id' is required")
                            : ApiException.invalidType(
                                    "id", "a non-empty string (at most " + MAX_ID_CHARS + " characters) or a number"));
            return;
        }
        Object type = frame.getValue("type");
        if (type == null) {
            start(id, key, frame);
        } else if ("cancel".equals(type)) {
            WebSocketSink sink = running.get(key);
            if (sink != null) {
                sink.cancel();
            } else {
                // Answered, so a client never waits on a cancel; it may have crossed the request's own "done".
                sendError(
                        id,
                        new ApiException(
                                404,
                                "invalid_request_error",
                                "id",
                                "unknown_id",
                                "no request with this id is running on this socket (it may have just ended)"));
            }
        } else {
            sendError(
                    id,
                    ApiException.invalid(
                            "type",
                            "unknown message type " + Json.encode(type)
                                    + ": leave 'type' out for a request, or send \"cancel\""));
        }
    }

    private void start(Object id, String key, JsonObject body) {
        if (running.containsKey(key)) {
            sendError(
                    id,
                    new ApiException(
                            409,
                            "invalid_request_error",
                            "id",
                            "duplicate_id",
                            "a request with this id is still running on this socket"));
            return;
        }
        if (running.size() >= MAX_IN_FLIGHT) {
            sendError(
                    id,
                    new ApiException(
                            429,
                            "rate_limit_exceeded",
                            null,
                            "too_many_in_flight",
                            "this socket already has " + MAX_IN_FLIGHT + " requests running; wait for one to finish"));
            return;
        }
        body.remove("id");
        RequestClass flow = classify.apply(body.getValue("user") instanceof String u ? u : null);
        // The id is taken now, so a duplicate or a cancel that arrives while the prompt is tokenized finds it.
        WebSocketSink sink = new WebSocketSink(this, id, key);
        running.put(key, sink);
        // Tokenizing is model work: off the event loop unless it is tiny, like the HTTP endpoints.
        parser.parse(Vertx.currentContext().owner(), body, () -> parser.parseStreaming(body, sessionHeader))
                .onComplete(ar -> {
                    if (sink.ended()) {
                        return; // cancelled or the socket closed meanwhile
                    }
                    if (ar.failed()) {
                        sink.refuse(ApiException.from(ar.cause()));
                        return;
                    }
                    CompletionCall call = ar.result();
                    // submit may end the request at once (e.g. overload): the sink has released itself by then.
                    sink.attach(
                            router.submit(call.generation().withFlow(flow), sink),
                            call.generation().promptTokens().length);
                });
    }

    /**
     * A map key for a client id: strings and numbers never collide, and numbers that are equal as
     * JSON values (1, 1.0, 1e0) are one id. Null when the id is missing or of no allowed kind.
     */
    static String key(Object id) {
        if (id instanceof String s) {
            return s.isEmpty() || s.length() > MAX_ID_CHARS ? null : "s:" + s;
        }
        if (id instanceof Number n) {
            // 1e400 arrives as Infinity; and a huge exponent must not be expanded into its digits.
            if ((n instanceof Double || n instanceof Float) && !Double.isFinite(n.doubleValue())) {
                return null;
            }
            BigDecimal d = new BigDecimal(n.toString()).stripTrailingZeros();
            if (d.precision() > MAX_ID_CHARS || Math.abs((long) d.scale()) > MAX_ID_CHARS) {
                return null;
            }
            return "n:" + d.toPlainString();
        }
        return null;
    }

    // ---- called by the requests' sinks ----

    private void stopMessageTimer() {
        if (messageTimer != -1) {
            vertx.cancelTimer(messageTimer);
            messageTimer = -1;
        }
    }

    /** Sends one frame unless the socket is gone; never waits. */
    void send(JsonObject frame) {
        if (!closed && !ws.isClosed()) {
            ws.writeTextMessage(frame.encode());
        }
    }

    boolean writeQueueFull() {
        return ws.writeQueueFull();
    }

    void hold(WebSocketSink sink) {
        backlog.add(sink);
    }

    /** The request has sent its last frame (or the client cancelled it): forget it. */
    void release(WebSocketSink sink) {
        running.remove(sink.key(), sink);
        backlog.remove(sink);
    }

    void sendError(Object id, ApiException e) {
        sendError(id, e.status(), ErrorBodies.body(e));
    }

    void sendError(Object id, int status, JsonObject errorBody) {
        send(new JsonObject()
                .put("id", id)
                .put("type", "error")
                .put("error", errorBody.getJsonObject("error"))
                .put("status", status));
    }

    private void onDrain() {
        for (Iterator<WebSocketSink> it = backlog.iterator(); it.hasNext() && !ws.writeQueueFull(); ) {
            WebSocketSink sink = it.next();
            it.remove();
            sink.flushHeld();
        }
        if (paused && !ws.writeQueueFull()) {
            paused = false;
            ws.resume();
        }
    }

    private void onClose() {
        closed = true;
        stopMessageTimer();
        message = null;
        List<WebSocketSink> left = new ArrayList<>(running.values());
        running.clear();
        backlog.clear();
        for (WebSocketSink sink : left) {
            sink.abandon("the socket closed");
        }
    }
}
