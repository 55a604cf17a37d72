package dev.tandem.bridge;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A TCP bridge client on a plain socket with the frames written and read by hand (4-byte big-endian
 * length + UTF-8 JSON), so a test checks the wire format itself rather than a library's view of it.
 */
public final class BridgeTestClient implements AutoCloseable {
    public static final Duration WAIT = Duration.ofSeconds(15);
    /** Put on the queue when the server closed the connection. */
    private static final JsonObject EOF = new JsonObject().put("type", "<eof>");

    public final Socket socket;
    private final DataOutputStream out;
    private final BlockingQueue<JsonObject> incoming = new LinkedBlockingQueue<>();
    /** Frames read while waiting for another one, in arrival order. */
    private final List<JsonObject> backlog = new ArrayList<>();

    private final AtomicInteger replies = new AtomicInteger();
    private final Thread reader;
    /** This client's own address, registered by {@link #registerOwnAddress()}. */
    public final String address = "tandem.client." + UUID.randomUUID();

    private BridgeTestClient(Socket socket) throws IOException {
        this.socket = socket;
        this.out = new DataOutputStream(socket.getOutputStream());
        DataInputStream in = new DataInputStream(socket.getInputStream());
        reader = new Thread(() -> read(in), "bridge-test-reader");
        reader.setDaemon(true);
        reader.start();
    }

    public static BridgeTestClient connect(int port) throws IOException {
        Socket socket = dev.tandem.TestTls.open(port);
        socket.setTcpNoDelay(true);
        return new BridgeTestClient(socket);
    }

    /** Connects from a given local address: 127.0.0.2, 127.0.0.3, … are other loopback peers on Linux. */
    public static BridgeTestClient connectFrom(String localHost, int port) throws IOException {
        Socket socket = dev.tandem.TestTls.open(port, localHost);
        socket.setTcpNoDelay(true);
        return new BridgeTestClient(socket);
    }

    private void read(DataInputStream in) {
        try {
            while (true) {
                int length = in.readInt();
                if (length < 0 || length > (64 << 20)) {
                    throw new IOException("bad frame length from the server: " + length);
                }
                byte[] json = new byte[length];
                in.readFully(json);
                incoming.add(new JsonObject(new String(json, StandardCharsets.UTF_8)));
            }
        } catch (EOFException e) {
            incoming.add(EOF);
        } catch (IOException e) {
            incoming.add(EOF.copy().put("error", e.toString()));
        }
    }

    // ---- writing ----

    public synchronized void writeRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** One frame around arbitrary bytes: the length prefix, then the bytes. */
    public void writeFrame(byte[] payload) throws IOException {
        byte[] frame = new byte[4 + payload.length];
        frame[0] = (byte) (payload.length >>> 24);
        frame[1] = (byte) (payload.length >>> 16);
        frame[2] = (byte) (payload.length >>> 8);
        frame[3] = (byte) payload.length;
        System.arraycopy(payload, 0, frame, 4, payload.length);
        writeRaw(frame);
    }

    public void write(JsonObject frame) throws IOException {
        writeFrame(frame.encode().getBytes(StandardCharsets.UTF_8));
    }

    public void registerOwnAddress() throws IOException {
        write(new JsonObject().put("type", "register").put("address", address));
    }

    /** Sends with a fresh reply address and returns the frame addressed to it (a reply or an err). */
    public JsonObject request(String to, JsonObject body) throws IOException {
        return requestWithBody(to, body);
    }

    /** {@link #request} with any JSON body; null leaves the body out. */
    public JsonObject requestWithBody(String to, Object body) throws IOException {
        String replyAddress = "reply-" + replies.incrementAndGet();
        JsonObject frame =
                new JsonObject().put("type", "send").put("address", to).put("replyAddress", replyAddress);
        if (body != null) {
            frame.put("body", body);
        }
        write(frame);
        return await(f -> replyAddress.equals(f.getString("address")), "the reply to " + to);
    }

    // ---- reading ----

    /** The next frame, in order (backlog first). */
    public JsonObject next() {
        return await(f -> true, "a frame");
    }

    /** The first frame, in order, that matches; the others stay for later reads. */
    public JsonObject await(Predicate<JsonObject> match, String what) {
        for (Iterator<JsonObject> it = backlog.iterator(); it.hasNext(); ) {
            JsonObject f = it.next();
            if (match.test(f)) {
                it.remove();
                return f;
            }
        }
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            JsonObject f;
            try {
                f = left <= 0 ? null : incoming.poll(left, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            if (f == null) {
                throw new AssertionError("timed out waiting for " + what + "; unread: " + backlog);
            }
            if (f.getString("type").equals(EOF.getString("type"))) {
                incoming.add(f); // stays closed for later reads
                throw new AssertionError(
                        "the server closed the connection while waiting for " + what + "; unread: " + backlog);
            }
            if (match.test(f)) {
                return f;
            }
            backlog.add(f);
        }
    }

    /** Frames read but not taken yet (a frame that arrived before the one a test waited for lands here). */
    public int unread() {
        return backlog.size();
    }

    /** The first frame already received (not waiting) that matches, or null. */
    public JsonObject firstUnread(Predicate<JsonObject> match) {
        incoming.drainTo(backlog);
        return backlog.stream().filter(match).findFirst().orElse(null);
    }

    /** An err frame not addressed to any reply. */
    public JsonObject awaitErr() {
        return await(f -> "err".equals(f.getString("type")) && f.getString("address") == null, "an err frame");
    }

    /** True once the server has closed the connection (waits up to {@link #WAIT}). */
    public boolean awaitClosed() throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            JsonObject f = incoming.poll(100, TimeUnit.MILLISECONDS);
            if (f != null && f.getString("type").equals(EOF.getString("type"))) {
                return true;
            }
            if (f != null) {
                backlog.add(f);
            }
        }
        return false;
    }

    /** Nothing arrives within {@code quiet} (frames already read count). */
    public boolean silentFor(Duration quiet) throws InterruptedException {
        return backlog.isEmpty() && incoming.poll(quiet.toMillis(), TimeUnit.MILLISECONDS) == null;
    }

    /** The message bodies of one request pushed to this client's address, up to and including its last one. */
    public Streamed collect(String requestId) {
        List<JsonObject> bodies = new ArrayList<>();
        // Bounded: each pass takes one frame or times out.
        while (true) {
            JsonObject f = await(
                    m -> "message".equals(m.getString("type"))
                            && address.equals(m.getString("address"))
                            && requestId.equals(m.getJsonObject("body").getValue("id")),
                    "frames of request " + requestId);
            JsonObject body = f.getJsonObject("body");
            bodies.add(body);
            if (body.containsKey("finish_reason") || body.containsKey("error")) {
                return new Streamed(bodies);
            }
        }
    }

    /** Waits for {@code count} token frames of a request; returns the token ids they carried. */
    public int awaitTokens(String requestId, int count) {
        int tokens = 0;
        for (int i = 0; i < count; i++) {
            JsonObject f = await(
                    m -> "message".equals(m.getString("type"))
                            && address.equals(m.getString("address"))
                            && requestId.equals(m.getJsonObject("body").getValue("id")),
                    "token frames of request " + requestId);
            tokens += f.getJsonObject("body").getJsonArray("token_ids").size();
        }
        return tokens;
    }

    /** One request's pushed frames: token frames, then the last. */
    public record Streamed(List<JsonObject> bodies) {
        public JsonObject last() {
            return bodies.get(bodies.size() - 1);
        }

        public String text() {
            StringBuilder sb = new StringBuilder();
            for (JsonObject b : bodies) {
                if (b.containsKey("text")) {
                    sb.append(b.getString("text"));
                }
            }
            return sb.toString();
        }

        public int[] tokenIds() {
            List<Integer> ids = new ArrayList<>();
            for (JsonObject b : bodies) {
                JsonArray a = b.getJsonArray("token_ids");
                if (a != null) {
                    a.forEach(v -> ids.add((Integer) v));
                }
            }
            return ids.stream().mapToInt(Integer::intValue).toArray();
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
