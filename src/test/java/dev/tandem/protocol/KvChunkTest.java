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

    @Test
    void rejectsANonBinaryBody() {
        KvChunk chunk = new KvChunk(1, 0, true, Buffer.buffer());
        assertThrows(
                ProtocolException.class,
                () -> KvChunk.fromMessage(chunk.deliveryOptions().getHeaders(), "text"));
    }
}
