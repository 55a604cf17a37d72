package dev.tandem.bridge;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;

/**
 * Cuts a TCP byte stream into the frames of the Vert.x TCP bridge protocol: a 4-byte big-endian
 * length, then that many bytes of UTF-8 JSON. A frame over the limit is reported and its payload
 * skipped as it arrives, so a client cannot make the router buffer more than one allowed frame and
 * the framing survives. A negative length means the stream is not framed at all; nothing after it can
 * be trusted.
 */
final class BridgeFrameReader implements Handler<Buffer> {

    /** What the reader finds; called on the socket's event loop, in stream order. */
    interface Listener {
        void onFrame(Buffer payload);

        /** A frame announced {@code length} bytes, over the limit; its payload is being skipped. */
        void onOversized(long length);

        /** The stream is not framed (a negative length); the reader ignores everything after it. */
        void onUnframed(int length);
    }

    private static final int HEADER = 4;

    private final int maxFrameBytes;
    private final Listener listener;
    /** Bytes received and not yet consumed: at most one header plus one allowed payload, plus one read. */
    private Buffer pending = Buffer.buffer();
    /** Payload bytes of an oversized frame still to drop. */
    private long skipping;

    private boolean unframed;
    /** When the frame still incomplete (or the oversized one still being skipped) began; 0 between frames. */
    private long frameStartNanos;

    BridgeFrameReader(int maxFrameBytes, Listener listener) {
        this.maxFrameBytes = maxFrameBytes;
        this.listener = listener;
    }

    @Override
    public void handle(Buffer data) {
        if (unframed) {
            return;
        }
        int from = 0;
        if (skipping > 0) {
            int dropped = (int) Math.min(skipping, data.length());
            skipping -= dropped;
            from = dropped;
        }
        if (from == data.length()) {
            if (skipping == 0 && pending.length() == 0) {
                frameStartNanos = 0; // the skipped frame ended with this read
            }
            return;
        }
        // A copy: the reader keeps bytes across reads, and the transport's buffer is not ours to keep.
        pending.appendBuffer(data, from, data.length() - from);
        int pos = 0;
        // Each pass consumes a header (and a payload) or stops: bounded by the bytes received.
        while (!unframed && pending.length() - pos >= HEADER) {
            if (skipping > 0) {
                int dropped = (int) Math.min(skipping, pending.length() - pos);
                skipping -= dropped;
                pos += dropped;
                continue;
            }
            int length = pending.getInt(pos);
            if (length < 0) {
                unframed = true;
                pending = Buffer.buffer();
                listener.onUnframed(length);
                return;
            }
            if (length > maxFrameBytes) {
                pos += HEADER;
                skipping = length;
                listener.onOversized(length);
                continue;
            }
            if (pending.length() - pos - HEADER < length) {
                break; // the rest of this frame is still on its way
            }
            Buffer payload = pending.getBuffer(pos + HEADER, pos + HEADER + length);
            pos += HEADER + length;
            listener.onFrame(payload);
        }
        if (skipping > 0 && pos < pending.length()) {
            // Fewer than HEADER bytes left while skipping: they belong to the skipped payload too.
            int dropped = (int) Math.min(skipping, pending.length() - pos);
            skipping -= dropped;
            pos += dropped;
        }
        // Compact only after consuming: copying an incomplete frame on every read would cost O(n^2)
        // for a frame that arrives in many small reads, all on the router's event loop.
        if (pos == pending.length()) {
            pending = Buffer.buffer();
        } else if (pos > 0) {
            pending = pending.getBuffer(pos, pending.length());
        }
        // The clock of a frame runs from its first byte to its last: a peer trickling one byte a second is
        // not idle, but cannot make a frame last for ever either.
        boolean midFrame = skipping > 0 || pending.length() > 0;
        if (!midFrame) {
            frameStartNanos = 0;
        } else if (frameStartNanos == 0 || pos > 0) {
            frameStartNanos = System.nanoTime();
        }
    }

    /** When the frame being read began (System.nanoTime), or 0 when no frame is partly read. */
    long frameStartNanos() {
        return frameStartNanos;
    }
}
