package dev.tandem.bridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.protocol.Addresses;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A client of the SockJS bridge's raw WebSocket endpoint ({@code /eventbus/websocket}: one JSON frame
 * per text message, no SockJS framing) on the JDK's WebSocket, independent of Vert.x. It keeps every
 * frame the server sends, in order, so a test can look for one and then check nothing else came.
 */
final class SockJsTestClient implements WebSocket.Listener, AutoCloseable {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** A request's pushes: bodies in order, tokens and text concatenated, and the last body. */
    record Streamed(List<JsonObject> bodies, int[] tokenIds, String text, JsonObject last) {}

    final String address = Addresses.client(UUID.randomUUID().toString());
    private final BlockingQueue<JsonObject> frames = new LinkedBlockingQueue<>();
    /** Frames read while looking for another one, in order; searched first. */
    private final List<JsonObject> unread = new ArrayList<>();

    final CompletableFuture<Integer> closed = new CompletableFuture<>();
    private final StringBuilder partial = new StringBuilder();
    private final ByteArrayOutputStream binary = new ByteArrayOutputStream();
    private WebSocket socket;
    private final ScheduledExecutorService pinger = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sockjs-test-ping");
        t.setDaemon(true);
        return t;
    });

    static SockJsTestClient connect(int port) throws Exception {
        SockJsTestClient c = new SockJsTestClient();
        c.socket = HTTP.newWebSocketBuilder()
                .connectTimeout(Duration.ofSeconds(5))
                .buildAsync(URI.create("ws://127.0.0.1:" + port + "/eventbus/websocket"), c)
                .get(10, TimeUnit.SECONDS);
        // The bridge closes a socket that has not pinged for 10 s, as the Vert.x client does every 5 s.
        c.pinger.scheduleAtFixedRate(
                () -> {
                    if (!c.closed.isDone()) {
                        c.sendText(new JsonObject().put("type", "ping").encode());
                    }
                },
                0,
                4,
                TimeUnit.SECONDS);
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

    /** The raw WebSocket transport sends its frames as binary messages of UTF-8 JSON. */
    @Override
    public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        binary.write(bytes, 0, bytes.length);
        if (last) {
            frames.add(new JsonObject(binary.toString(StandardCharsets.UTF_8)));
            binary.reset();
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

    /** Synchronized: the pinger sends too, and a JDK WebSocket takes one message at a time. */
    synchronized void sendText(String text) {
        try {
            socket.sendText(text, true).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("send failed", e);
        }
    }

    synchronized void sendBinary(byte[] bytes) {
        try {
            socket.sendBinary(ByteBuffer.wrap(bytes), true).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("send failed", e);
        }
    }

    void write(JsonObject frame) {
        sendText(frame.encode());
    }

    /** Registers {@link #address} and waits until the bridge has it (a ping sent after is answered after it). */
    void registerOwnAddress() throws InterruptedException {
        register(address);
    }

    void register(String addr) throws InterruptedException {
        write(new JsonObject().put("type", "register").put("address", addr));
        sync();
    }

    /**
     * Waits until the bridge has handled everything sent before: a send to {@code tandem.cancel} with
     * a reply address is answered only after the frames before it (one socket, one event loop).
     */
    void sync() throws InterruptedException {
        JsonObject reply = request(Addresses.CANCEL, new JsonObject().put("id", "sync"));
        assertEquals("rec", reply.getString("type"), reply.encode());
    }

    /** A send with a fresh reply address; returns the reply (a {@code rec} or an {@code err} frame). */
    JsonObject request(String to, Object body) throws InterruptedException {
        // Vert.x's SockJS bridge takes reply addresses of at most 36 characters: a UUID.
        String replyAddress = UUID.randomUUID().toString();
        write(new JsonObject()
                .put("type", "send")
                .put("address", to)
                .put("replyAddress", replyAddress)
                .put("body", body));
        return await(f -> replyAddress.equals(f.getString("address")), "the reply to " + to);
    }

    JsonObject next() throws InterruptedException {
        if (!unread.isEmpty()) {
            return unread.remove(0);
        }
        JsonObject f = frames.poll(10, TimeUnit.SECONDS);
        if (f == null) {
            throw new AssertionError("no frame within 10 s");
        }
        return f;
    }

    /** The first frame matching {@code p}; frames before it stay unread, in order. */
    JsonObject await(Predicate<JsonObject> p, String what) throws InterruptedException {
        for (Iterator<JsonObject> it = unread.iterator(); it.hasNext(); ) {
            JsonObject f = it.next();
            if (p.test(f)) {
                it.remove();
                return f;
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            long left = deadline - System.nanoTime();
            JsonObject f = left > 0 ? frames.poll(left, TimeUnit.NANOSECONDS) : null;
            if (f == null) {
                throw new AssertionError("no " + what + " within 10 s; unread: " + unread);
            }
            if (p.test(f)) {
                return f;
            }
            unread.add(f);
        }
    }

    /** The first {@code err} frame that is not addressed to a reply. */
    JsonObject awaitErr() throws InterruptedException {
        return await(f -> "err".equals(f.getString("type")) && f.getValue("address") == null, "an err frame");
    }

    /** Every frame received and not yet read, after a short quiet time. */
    List<JsonObject> drain(Duration quiet) throws InterruptedException {
        List<JsonObject> out = new ArrayList<>(unread);
        unread.clear();
        JsonObject f;
        while ((f = frames.poll(quiet.toMillis(), TimeUnit.MILLISECONDS)) != null) {
            out.add(f);
        }
        return out;
    }

    /** Reads the pushes of request {@code id} to {@link #address} until its last one. */
    Streamed collect(String id) throws InterruptedException {
        List<JsonObject> bodies = new ArrayList<>();
        List<Integer> tokens = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        for (int n = 0; ; n++) {
            assertTrue(n < 10_000, "too many frames");
            JsonObject f = await(
                    x -> "rec".equals(x.getString("type"))
                            && address.equals(x.getString("address"))
                            && id.equals(x.getJsonObject("body").getString("id")),
                    "a push for " + id);
            JsonObject body = f.getJsonObject("body");
            bodies.add(body);
            if (body.containsKey("token_ids")) {
                JsonArray ids = body.getJsonArray("token_ids");
                ids.forEach(t -> tokens.add((Integer) t));
                text.append(body.getString("text"));
            }
            if (body.containsKey("finish_reason") || body.containsKey("error")) {
                return new Streamed(
                        bodies, tokens.stream().mapToInt(Integer::intValue).toArray(), text.toString(), body);
            }
        }
    }

    /**
     * Starts a request streaming to {@link #address} and returns its id; greedy unless the body says
     * otherwise, so a short request ends the same way every run.
     */
    String generate(JsonObject body) throws InterruptedException {
        JsonObject request = body.copy().put("stream_to", address);
        if (!request.containsKey("temperature")) {
            request.put("temperature", 0);
        }
        JsonObject reply = request(Addresses.GENERATE, request);
        assertEquals("rec", reply.getString("type"), reply.encode());
        return reply.getJsonObject("body").getString("id");
    }

    boolean awaitClosed() {
        try {
            closed.get(10, TimeUnit.SECONDS);
            return true;
        } catch (Exception e) {
            return closed.isDone();
        }
    }

    @Override
    public void close() {
        pinger.shutdownNow();
        if (!socket.isOutputClosed()) {
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye");
        }
        socket.abort();
    }
}
