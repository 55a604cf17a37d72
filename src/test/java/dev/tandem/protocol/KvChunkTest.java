package dev.tandem.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KvChunkTest {

    @Test
    void headersRoundTrip() {
        KvChunk chunk = new KvChunk(Long.MIN_VALUE + 5, 12, true, Buffer.buffer(new byte[] {1, 2, 3}));
        KvChunk back = KvChunk.fromMessage(chunk.deliveryOptions().getHeaders(), chunk.payload());
        assertEquals(chunk, back);
    }

    @ParameterizedTest
    @CsvSource(
            nullValues = "null",
            value = {"null, 0, true", "x, 0, true", "1, -1, true", "1, 0, yes", "1, null, false", "1, 0, null"})
    void rejectsMalformedHeaders(String id, String index, String last) {
        MultiMap headers = MultiMap.caseInsensitiveMultiMap();
        if (id != null) {
            headers.add(KvChunk.REQUEST_ID, id);
        }
        if (index != null) {
            headers.add(KvChunk.INDEX, index);
        }
        if (last != null) {
            headers.add(KvChunk.LAST, last);
        }
        assertThrows(ProtocolException.class, () -> KvChunk.fromMessage(headers, Buffer.buffer("x")));
    }

    /** The body codec: the bytes after whatever the event bus wrote first, a view of the frame, not a copy. */
    @Test
    void bodyCodecRoundTripsAfterTheFramesHeader() {
        byte[] bytes = new byte[300_000];
        new java.util.Random(3).nextBytes(bytes);
        Buffer body = Buffer.buffer(bytes);
        Buffer wire = Buffer.buffer().appendString("event bus header"); // what precedes the body on the wire
        int at = wire.length();
        KvChunkCodec.INSTANCE.encodeToWire(wire, body);
        wire.appendString("trailing"); // a frame may go on after the body
        assertEquals(at + 4 + bytes.length + "trailing".length(), wire.length());
        Buffer back = KvChunkCodec.INSTANCE.decodeFromWire(at, wire);
        assertEquals(body, back);
        wire.setByte(at + 4, (byte) (bytes[0] + 1));
        assertEquals(bytes[0] + 1, back.getByte(0), "decoded as a slice of the frame");
        assertEquals(body, KvChunkCodec.INSTANCE.transform(body));
        assertEquals(KvChunkCodec.NAME, chunkCodecName(new KvChunk(1, 0, false, body)));
    }

    @Test
    void bodyCodecRejectsALengthPastTheFrame() {
        Buffer wire = Buffer.buffer().appendInt(100).appendBytes(new byte[10]);
        assertThrows(ProtocolException.class, () -> KvChunkCodec.INSTANCE.decodeFromWire(0, wire));
        Buffer negative = Buffer.buffer().appendInt(-1);
        assertThrows(ProtocolException.class, () -> KvChunkCodec.INSTANCE.decodeFromWire(0, negative));
    }

    private static String chunkCodecName(KvChunk chunk) {
        return chunk.deliveryOptions().getCodecName();
    }

    @Test
    void rejectsANonBinaryBody() {
        KvChunk chunk = new KvChunk(1, 0, true, Buffer.buffer());
        assertThrows(
                ProtocolException.class,
                () -> KvChunk.fromMessage(chunk.deliveryOptions().getHeaders(), "text"));
    }
}
