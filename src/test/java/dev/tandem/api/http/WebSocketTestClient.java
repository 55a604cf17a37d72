package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A {@code /v1/stream} client on the JDK's WebSocket (independent of Vert.x), collecting whole messages as JSON. */
final class WebSocketTestClient implements WebSocket.Listener, AutoCloseable {
    static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** One request's frames in order, its tokens and text concatenated; {@code last} is done or error. */
    record Result(List<JsonObject> frames, int[] tokenIds, String text, JsonObject last) {}

    final BlockingQueue<JsonObject> frames = new LinkedBlockingQueue<>();
    final CompletableFuture<Integer> closed = new CompletableFuture<>();
    private final StringBuilder partial = new StringBuilder();
    WebSocket socket;

    static WebSocketTestClient connect(int port) throws Exception {
        WebSocketTestClient c = new WebSocketTestClient();
        c.socket = HTTP.newWebSocketBuilder()
                .connectTimeout(Duration.ofSeconds(5))
                .buildAsync(URI.create("ws://127.0.0.1:" + port + "/v1/stream"), c)
                .get(10, TimeUnit.SECONDS);
        return c;
    }

    @Override
    public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
        partial.append(data);
        if (last) {
            frames.add(new JsonObject(partial.toString()));
            partial.setLength(0);
        }
        ws.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
        closed.complete(statusCode);
        return null;
    }

    @Override
    public void onError(WebSocket ws, Throwable error) {
        closed.completeExceptionally(error);
    }

    void send(String text) {
        join(socket.sendText(text, true));
    }

    static void join(CompletableFuture<WebSocket> f) {
        try {
            f.get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("send failed", e);
        }
    }

    JsonObject next() throws InterruptedException {
        JsonObject f = frames.poll(10, TimeUnit.SECONDS);
        if (f == null) {
            throw new AssertionError("no frame within 10 s");
        }
        return f;
    }

    private static boolean isFinal(JsonObject f) {
        return f.getString("type").equals("done") || f.getString("type").equals("error");
    }

    /** Reads until every id (as {@code String.valueOf}) has its final frame; other ids' frames are skipped. */
    Map<String, Result> collect(Set<String> ids) throws InterruptedException {
        Map<String, List<JsonObject>> byId = new HashMap<>();
        Map<String, Result> done = new HashMap<>();
        for (int n = 0; done.size() < ids.size(); n++) {
            assertTrue(n < 10_000, "too many frames");
            JsonObject f = next();
            String id = String.valueOf(f.getValue("id"));
            if (!ids.contains(id)) {
                continue;
            }
            assertTrue(!done.containsKey(id), "a frame after the final one: " + f.encode());
            List<JsonObject> all = byId.computeIfAbsent(id, k -> new ArrayList<>());
            all.add(f);
            if (isFinal(f)) {
                List<Integer> tokens = new ArrayList<>();
                StringBuilder text = new StringBuilder();
                for (JsonObject t : all) {
                    if (t.getString("type").equals("tokens")) {
                        t.getJsonArray("token_ids").forEach(x -> tokens.add((Integer) x));
                        text.append(t.getString("text"));
                    }
                }
                done.put(
                        id,
                        new Result(
                                all, tokens.stream().mapToInt(Integer::intValue).toArray(), text.toString(), f));
            }
        }
        return done;
    }

    /** Reads until {@code id} has had {@code count} token frames; returns how many tokens they carried. */
    int awaitTokenFrames(String id, int count) throws InterruptedException {
        int seen = 0;
        int tokens = 0;
        for (int n = 0; seen < count; n++) {
            assertTrue(n < 10_000, "too many frames");
            JsonObject f = next();
            if (String.valueOf(f.getValue("id")).equals(id)) {
                assertTrue(!isFinal(f), f.encode());
                if (f.getString("type").equals("tokens")) {
                    seen++;
                    tokens += f.getJsonArray("token_ids").size();
                }
            }
        }
        return tokens;
    }

    /** Skips frames up to the first error frame. */
    JsonObject awaitError() throws InterruptedException {
        for (int n = 0; n < 10_000; n++) {
            JsonObject f = next();
            if (f.getString("type").equals("error")) {
                return f;
            }
        }
        throw new AssertionError("no error frame");
    }

    @Override
    public void close() {
        socket.abort();
    }
}
