package dev.tandem.upstream.kvevents;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** msgpack bytes written by a lambda, for fixtures that play an engine's KV event publisher. */
public final class MsgPack {
    /** Writes values to a packer. */
    public interface Packing {
        void accept(MessageBufferPacker p) throws IOException;
    }

    private MsgPack() {}

    public static byte[] pack(Packing packing) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            packing.accept(p);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
