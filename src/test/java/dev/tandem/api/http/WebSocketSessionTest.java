package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.tandem.router.Usage;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.http.WebSocketFrame;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Back-pressure and id keys of a {@code /v1/stream} session, against a scripted socket. */
class WebSocketSessionTest {

    /** A ServerWebSocket whose write queue is full when the test says so; records what is written. */
    static final class ScriptedSocket {
        final List<JsonObject> written = new ArrayList<>();
        final List<String> flow = new ArrayList<>();
        boolean full;
        Handler<WebSocketFrame> frames;
        Handler<Void> drain;
        final ServerWebSocket ws = (ServerWebSocket) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {ServerWebSocket.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "writeTextMessage" -> {
                            written.add(new JsonObject((String) args[0]));
                            return Future.succeededFuture();
                        }
                        case "writeQueueFull" -> {
                            return full;
                        }
                        case "isClosed" -> {
                            return false;
                        }
                        case "frameHandler" -> frames = cast(args[0]);
                        case "drainHandler" -> drain = cast(args[0]);
                        case "pause", "resume" -> flow.add(method.getName());
                        case "closeHandler", "exceptionHandler" -> {}
                        default -> throw new UnsupportedOperationException(method.getName());
                    }
                    return proxy;
                });

        @SuppressWarnings("unchecked")
        private static <T> T cast(Object o) {
            return (T) o;
        }

        void drained() {
            full = false;
            drain.handle(null);
        }
    }

    private static JsonObject tokens(Object id, String text, int... ids) {
        JsonArray array = new JsonArray();
        for (int t : ids) {
            array.add(t);
        }
        return new JsonObject()
                .put("id", id)
                .put("type", "tokens")
                .put("text", text)
                .put("token_ids", array);
    }

    @Test
    void whileTheQueueIsFullTokensAreMergedAndSentInOrderOnDrain() {
        ScriptedSocket socket = new ScriptedSocket();
        WebSocketSession session = new WebSocketSession(
                null, socket.ws, null, null, 1024, 0, null, u -> dev.tandem.router.RequestClass.DEFAULT);
        session.start();
        WebSocketSink a = new WebSocketSink(session, "a", WebSocketSession.key("a"));
        WebSocketSink b = new WebSocketSink(session, 2, WebSocketSession.key(2));
        a.onTokens(new int[] {1}, "x");
        socket.full = true;
        a.onTokens(new int[] {2}, "y");
        b.onTokens(new int[] {4}, "w");
        a.onTokens(new int[] {3}, "z");
        a.onTokens(new int[0], "");
        assertEquals(List.of(tokens("a", "x", 1)), socket.written);

        socket.drained();
        assertEquals(List.of(tokens("a", "x", 1), tokens("a", "yz", 2, 3), tokens(2, "w", 4)), socket.written);

        // The last frame never waits: held tokens go first, then "done", even with the queue full.
        socket.full = true;
        socket.written.clear();
        a.onTokens(new int[] {5}, "q");
        a.onFinish("length", new Usage(5, 5));
        assertEquals(2, socket.written.size());
        assertEquals(tokens("a", "q", 5), socket.written.get(0));
        assertEquals("done", socket.written.get(1).getString("type"));
        assertEquals(10, socket.written.get(1).getJsonObject("usage").getInteger("total_tokens"));
        socket.drained();
        assertEquals(2, socket.written.size(), "nothing left to send for a finished request");
    }

    @Test
    void readingPausesWhileTheClientIsNotReading() {
        ScriptedSocket socket = new ScriptedSocket();
        new WebSocketSession(null, socket.ws, null, null, 1024, 0, null, u -> dev.tandem.router.RequestClass.DEFAULT)
                .start();
        socket.full = true;
        socket.frames.handle(WebSocketFrame.textFrame("{nope", true));
        assertEquals("error", socket.written.get(0).getString("type"));
        assertEquals(List.of("pause"), socket.flow);
        socket.drained();
        assertEquals(List.of("pause", "resume"), socket.flow);
    }

    @Test
    void idsAreKeyedByJsonValue() {
        assertEquals(WebSocketSession.key(1), WebSocketSession.key(1.0));
        assertEquals(WebSocketSession.key(1), WebSocketSession.key(1L));
        assertEquals(WebSocketSession.key(100), WebSocketSession.key(1e2));
        assertNotEquals(WebSocketSession.key(1), WebSocketSession.key("1"));
        assertNull(WebSocketSession.key(""));
        assertNull(WebSocketSession.key("x".repeat(257)));
        assertNull(WebSocketSession.key(true));
        assertNull(WebSocketSession.key(null));
        assertNull(WebSocketSession.key(new JsonObject()));
    }
}
