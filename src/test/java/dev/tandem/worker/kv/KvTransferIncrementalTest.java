package dev.tandem.worker.kv;

import static dev.tandem.worker.kv.KvTransferCodecTest.FINGERPRINT;
import static dev.tandem.worker.kv.KvTransferCodecTest.LAYOUT;
import static dev.tandem.worker.kv.KvTransferCodecTest.NO_LIMIT;
import static dev.tandem.worker.kv.KvTransferCodecTest.assertSameKv;
import static dev.tandem.worker.kv.KvTransferCodecTest.concat;
import static dev.tandem.worker.kv.KvTransferCodecTest.randomCache;
import static dev.tandem.worker.kv.KvTransferCodecTest.slice;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.KvBlock;
import dev.tandem.engine.KvCache;
import io.vertx.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Version 2 of the KV stream: the token ids travel along, and the blocks the receiver holds already
 * stay home — taken from its own cache, or asked for again when it lost them.
 */
class KvTransferIncrementalTest {

    private static int[] tokens(int n) {
        return IntStream.range(0, n).map(i -> 1000 + i).toArray();
    }

    /** A receiver holding the first {@code held} blocks of {@code sent}. */
    private static KvTransferAssembler.PrefixSource holding(KvCache sent, int held) {
        return (tokens, blocks) -> {
            List<KvBlock> out = new ArrayList<>();
            for (int b = 0; b < Math.min(blocks, held); b++) {
                out.add(KvBlock.unpooled(sent.block(b)));
            }
            return out;
        };
    }

    @ParameterizedTest(name = "{0} tokens from block {1}, receiver holds {2}, chunks of {3} bytes")
    @CsvSource({"40, 0, 0, 100", "40, 2, 2, 100", "48, 2, 3, 4096", "33, 1, 1, 7", "16, 0, 0, 64", "100, 6, 6, 1000"})
    void theReceiverRebuildsTheWholeCacheFromItsBlocksAndTheStream(int n, int start, int held, int chunkBytes)
            throws Exception {
        KvCache sent = randomCache(LAYOUT, n, 0, n * 31L + start);
        int[] ids = tokens(n);
        List<Buffer> chunks = KvTransferCodec.encode(sent, FINGERPRINT, 64, ids, start);
        byte[] stream = concat(chunks);
        assertEquals(KvTransferCodec.encodedSize(LAYOUT, n, start), stream.length);
        KvTransferAssembler a = new KvTransferAssembler(LAYOUT, FINGERPRINT, NO_LIMIT, holding(sent, held), null);
        for (Buffer piece : slice(stream, chunkBytes)) {
            a.accept(piece);
        }
        assertTrue(a.complete());
        assertEquals(-1, a.needFromBlock());
        assertArrayEquals(ids, a.tokens());
        assertEquals(start, a.startBlock());
        KvCache received = a.finish();
        assertSameKv(sent, received);
        for (int b = 0; b < start; b++) {
            assertSame(sent.block(b), received.block(b), "block " + b + " is the receiver's own, not a copy");
        }
    }

    @ParameterizedTest(name = "from block {0}, receiver holds {1}")
    @CsvSource({"3, 0", "3, 2", "1, 0"})
    void aReceiverThatLostBlocksSaysWhereToResendFrom(int start, int held) throws Exception {
        KvCache sent = randomCache(LAYOUT, 60, 0, 5);
        byte[] stream = concat(KvTransferCodec.encode(sent, FINGERPRINT, 1024, tokens(60), start));
        KvTransferAssembler a = new KvTransferAssembler(LAYOUT, FINGERPRINT, NO_LIMIT, holding(sent, held), null);
        for (Buffer piece : slice(stream, 333)) {
            a.accept(piece);
        }
        assertTrue(a.complete(), "read to its end and checked all the same");
        assertEquals(held, a.needFromBlock());
        assertThrows(KvTransferException.class, a::finish);

        // Resent from where it asked: whole again.
        byte[] again = concat(KvTransferCodec.encode(sent, FINGERPRINT, 1024, tokens(60), held));
        KvTransferAssembler b = new KvTransferAssembler(LAYOUT, FINGERPRINT, NO_LIMIT, holding(sent, held), null);
        b.accept(Buffer.buffer(again));
        assertSameKv(sent, b.finish());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"a start block past the blocks sent, 2", "a corrupted token id, 3"})
    void damagedExtensionsAreRefused(String name, int what) throws Exception {
        KvCache sent = randomCache(LAYOUT, 40, 0, 9);
        byte[] stream = concat(KvTransferCodec.encode(sent, FINGERPRINT, 4096, tokens(40), 1));
        int extension = KvTransferCodec.HEADER_BYTES;
        if (what == 2) {
            stream[extension] = 2; // startBlock 1 → 2: does not match the blocks sent
        } else {
            stream[extension + 4 + 8] ^= 1; // a token id: the CRC catches it
        }
        KvTransferAssembler a = new KvTransferAssembler(LAYOUT, FINGERPRINT, NO_LIMIT, holding(sent, 3), null);
        assertThrows(KvTransferException.class, () -> {
            a.accept(Buffer.buffer(stream));
            a.finish();
        });
    }

    @ParameterizedTest(name = "start {0}")
    @CsvSource({"-1", "3"})
    void aStartBlockOutsideTheSequenceIsRefusedBySender(int start) {
        KvCache sent = randomCache(LAYOUT, 40, 0, 1);
        assertThrows(
                IllegalArgumentException.class,
                () -> KvTransferCodec.encode(sent, FINGERPRINT, 4096, tokens(40), start));
    }
}
