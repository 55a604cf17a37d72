package dev.tandem.worker.kv;

import dev.tandem.protocol.KvChunk;
import dev.tandem.tracing.TraceHeaders;
import io.opentelemetry.api.trace.Span;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageProducer;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * Sends a KV transfer's chunks over the event bus with at most {@code window} of them not yet written to
 * the connection, then the last one as a request whose reply is the acknowledgement.
 *
 * <p>Why a window: sending every chunk at once queues the whole cache, encoded a second time, in the
 * connection's outbound buffer. For a cache of hundreds of MiB those copies are live through young
 * collections, and copying them is what bounded the event bus to a fraction of raw TCP ({@code tandem
 * bench kv}). A producer's write completes when the message is on the socket, so the window bounds the
 * memory in flight the way TCP backpressure does. Call from an event loop (or the context that owns
 * the transfer); chunks go out in order.
 */
public final class KvChunkSender {
    /** Chunks written but not yet on the socket: 8 × 256 KiB keeps a loopback or NIC link busy. */
    public static final int DEFAULT_WINDOW = 8;

    private final Vertx vertx;
    private final String address;
    private final List<Buffer> chunks;
    private final long requestId;
    private final int attempt;
    private final int window;
    private final long ackTimeoutMs;
    private final MessageProducer<Buffer> producer;
    private final Span span;
    private final Promise<Message<JsonObject>> done = Promise.promise();
    private int next;
    private int inFlight;
    private boolean failed;
    private boolean pumping;

    private KvChunkSender(
            Vertx vertx,
            String address,
            List<Buffer> chunks,
            long requestId,
            int attempt,
            int window,
            long ackTimeoutMs,
            Span span) {
        this.span = span;
        this.vertx = vertx;
        this.address = address;
        this.chunks = chunks;
        this.requestId = requestId;
        this.attempt = attempt;
        this.window = window;
        this.ackTimeoutMs = ackTimeoutMs;
        this.producer = vertx.eventBus().sender(address);
    }

    /**
     * Sends {@code chunks} (at least one) to {@code address}; the future is the reply to the last chunk, or
     * the first failure (a write that could not reach the peer, the reply's timeout).
     */
    public static Future<Message<JsonObject>> send(
            Vertx vertx,
            String address,
            List<Buffer> chunks,
            long requestId,
            int attempt,
            int window,
            long ackTimeoutMs) {
        return send(vertx, address, chunks, requestId, attempt, window, ackTimeoutMs, Span.getInvalid());
    }

    /** {@link #send}, the first chunk carrying {@code span}'s trace context (when it is sampled). */
    public static Future<Message<JsonObject>> send(
            Vertx vertx,
            String address,
            List<Buffer> chunks,
            long requestId,
            int attempt,
            int window,
            long ackTimeoutMs,
            Span span) {
        if (chunks.isEmpty() || window < 1) {
            throw new IllegalArgumentException("a transfer needs a chunk and a window of 1+");
        }
        KvChunkSender sender =
                new KvChunkSender(vertx, address, chunks, requestId, attempt, window, ackTimeoutMs, span);
        sender.pump();
        return sender.done.future();
    }

    private void pump() {
        if (pumping) {
            return; // a write completed inside the loop below, which goes on from here
        }
        pumping = true;
        try {
            sendWhatTheWindowAllows();
        } finally {
            pumping = false;
        }
    }

    /**
     * A write to a local consumer completes at once, inside {@code write}: its callback must not call back
     * into the loop (a frame per chunk overflowed the stack for large caches in small chunks), so it only
     * frees its place and this loop takes the next chunk.
     */
    private void sendWhatTheWindowAllows() {
        int lastIndex = chunks.size() - 1;
        while (!failed && next < lastIndex && inFlight < window) {
            int index = next++;
            inFlight++;
            Buffer chunk = chunks.get(index);
            producer.deliveryOptions(
                    traced(index, new KvChunk(requestId, index, false, chunk, attempt).deliveryOptions()));
            producer.write(chunk).onComplete(written -> {
                inFlight--;
                if (written.failed()) {
                    fail(written.cause());
                } else {
                    pump();
                }
            });
        }
        if (!failed && next == lastIndex && inFlight == 0) {
            next++; // the last is sent once
            Buffer last = chunks.get(lastIndex);
            DeliveryOptions options = traced(
                    lastIndex,
                    new KvChunk(requestId, lastIndex, true, last, attempt)
                            .deliveryOptions()
                            .setSendTimeout(ackTimeoutMs));
            vertx.eventBus().<JsonObject>request(address, last, options).onComplete(done);
        }
    }

    private DeliveryOptions traced(int index, DeliveryOptions options) {
        if (index == 0) {
            TraceHeaders.inject(span, options::addHeader);
        }
        return options;
    }

    private void fail(Throwable cause) {
        if (!failed) {
            failed = true;
            done.tryFail(cause);
        }
    }
}
