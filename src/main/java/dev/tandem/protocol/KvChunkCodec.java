package dev.tandem.protocol;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;

/**
 * The wire form of a KV chunk's body: a length, then the bytes, as Vert.x's own Buffer codec writes them.
 * What differs is what it does not copy. The receiving event bus has already copied the whole message
 * into a buffer of its own, so the body is a slice of it rather than one more copy; the sender's frame
 * grows once to its final size instead of doubling from 1 KiB (each doubling a copy of what was written);
 * and a local delivery hands over a view of the chunk, which no one writes after it is sent.
 *
 * <p>Every node registers it when it joins ({@code ClusterNode}); a chunk names it in its delivery options.
 */
public final class KvChunkCodec implements MessageCodec<Buffer, Buffer> {
    public static final String NAME = "tandem-kv-chunk";
    public static final KvChunkCodec INSTANCE = new KvChunkCodec();

    private KvChunkCodec() {}

    @Override
    public void encodeToWire(Buffer wire, Buffer body) {
        int at = wire.length();
        int length = body.length();
        wire.setBuffer(at + 4, body); // grows the frame once, to header + body
        wire.setInt(at, length);
    }

    @Override
    public Buffer decodeFromWire(int pos, Buffer wire) {
        int length = wire.getInt(pos);
        if (length < 0 || pos + 4L + length > wire.length()) {
            throw new ProtocolException("KV chunk body of " + length + " bytes overruns its message");
        }
        return wire.slice(pos + 4, pos + 4 + length);
    }

    @Override
    public Buffer transform(Buffer body) {
        return body.slice();
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public byte systemCodecID() {
        return -1;
    }
}
