package dev.tandem.worker.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;
import dev.tandem.worker.kv.KvTransferException.Reason;
import io.vertx.core.buffer.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class KvTransferCodecTest {
    /** 2 layers × {K,V} × 16 slots × kvDim 8 = 512 floats = 2 KiB per block. */
    static final KvLayout LAYOUT = new KvLayout(2, 2, 4, 16);

    static final long FINGERPRINT = 0x1234_5678_9abc_def0L;
    static final long NO_LIMIT = Long.MAX_VALUE;

    /** Every block filled with random bit patterns (NaN payloads and -0.0 included) so bit-identity is really tested. */
    static KvCache randomCache(KvLayout layout, int tokens, int extraBlocks, long seed) {
        KvCache cache = new KvCache(layout);
        cache.ensureCapacity(tokens + extraBlocks * layout.blockSize());
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int b = 0; b < cache.blockCount(); b++) {
            float[] block = cache.block(b);
            for (int i = 0; i < block.length; i++) {
                block[i] = Float.intBitsToFloat(rnd.nextInt());
            }
        }
        cache.setLength(tokens);
        return cache;
    }

    static byte[] concat(List<Buffer> chunks) {
        Buffer all = Buffer.buffer();
        chunks.forEach(all::appendBuffer);
        return all.getBytes();
    }

    /** Re-slices a stream into pieces of {@code size} bytes, smaller than encode allows, to split the header too. */
    static List<Buffer> slice(byte[] stream, int size) {
        List<Buffer> out = new ArrayList<>();
        for (int i = 0; i < stream.length; i += size) {
            out.add(Buffer.buffer().appendBytes(stream, i, Math.min(size, stream.length - i)));
        }
        return out;
    }

    static KvTransferAssembler assembler() {
        return new KvTransferAssembler(LAYOUT, FINGERPRINT, NO_LIMIT);
    }

    static void assertSameKv(KvCache sent, KvCache received) {
        assertEquals(sent.length(), received.length());
        assertEquals(sent.layout(), received.layout());
        assertEquals(sent.layout().blocksFor(sent.length()), received.blockCount());
        for (int b = 0; b < received.blockCount(); b++) {
            int[] expected = bits(sent.block(b));
            int[] actual = bits(received.block(b));
            assertArrayEquals(expected, actual, "block " + b);
        }
    }

    static int[] bits(float[] floats) {
        return IntStream.range(0, floats.length)
                .map(i -> Float.floatToRawIntBits(floats[i]))
                .toArray();
    }

    static KvCache receive(KvTransferAssembler assembler, List<Buffer> chunks) throws KvTransferException {
        for (Buffer chunk : chunks) {
            assertFalse(assembler.complete());
            assembler.accept(chunk);
        }
        assertTrue(assembler.complete());
        return assembler.finish();
    }

    // ---- round trips ----

    static final int[] TOKEN_COUNTS = {1, 15, 16, 17, 100};

    static Stream<Arguments> encodeChunkings() {
        int[] chunkSizes = {64, 100, 101, 2047, 4097, Integer.MAX_VALUE};
        return IntStream.of(TOKEN_COUNTS)
                .boxed()
                .flatMap(t -> IntStream.of(chunkSizes).mapToObj(c -> Arguments.of(t, c)));
    }

    @ParameterizedTest(name = "{0} tokens, chunks of {1}")
    @MethodSource("encodeChunkings")
    void roundTripsThroughEncodedChunks(int tokens, int maxChunk) throws KvTransferException {
        KvCache sent = randomCache(LAYOUT, tokens, 0, tokens * 31L + maxChunk);
        List<Buffer> chunks = KvTransferCodec.encode(sent, FINGERPRINT, maxChunk);
        long size = KvTransferCodec.encodedSize(LAYOUT, tokens);

        assertEquals(size, chunks.stream().mapToLong(Buffer::length).sum());
        for (int i = 0; i < chunks.size(); i++) {
            int len = chunks.get(i).length();
            assertTrue(len <= maxChunk, "chunk " + i + " has " + len + " bytes");
            if (i < chunks.size() - 1) {
                assertEquals(maxChunk, len, "only the last chunk may be short");
            }
        }
        KvTransferAssembler assembler = assembler();
        assertSameKv(sent, receive(assembler, chunks));
        assertEquals(size, assembler.bytesReceived());
    }

    static Stream<Arguments> receiveSlicings() {
        int[] sliceSizes = {1, 3, 7, 13, 39, 41, 63};
        return IntStream.of(TOKEN_COUNTS)
                .boxed()
                .flatMap(t -> IntStream.of(sliceSizes).mapToObj(s -> Arguments.of(t, s)));
    }

    @ParameterizedTest(name = "{0} tokens, slices of {1}")
    @MethodSource("receiveSlicings")
    void assemblesSlicesThatSplitHeaderFloatsAndTrailer(int tokens, int slice) throws KvTransferException {
        KvCache sent = randomCache(LAYOUT, tokens, 0, tokens * 17L + slice);
        byte[] stream = concat(KvTransferCodec.encode(sent, FINGERPRINT, 1 << 20));
        assertSameKv(sent, receive(assembler(), slice(stream, slice)));
    }

    @ParameterizedTest(name = "chunks of {0}")
    @ValueSource(ints = {65_537, 100_001, Integer.MAX_VALUE})
    void roundTripsAStreamLargerThanTheCopyWindow(int maxChunk) throws KvTransferException {
        KvLayout big = new KvLayout(4, 4, 16, 16); // 32 KiB blocks: 50 tokens make a 128 KiB stream
        KvCache sent = randomCache(big, 50, 0, maxChunk);
        List<Buffer> chunks = KvTransferCodec.encode(sent, FINGERPRINT, maxChunk);
        assertTrue(chunks.stream().allMatch(c -> c.length() <= maxChunk));
        assertSameKv(sent, receive(new KvTransferAssembler(big, FINGERPRINT, NO_LIMIT), chunks));
    }

    @Test
    void sendsOnlyTheBlocksCoveringTheLength() throws KvTransferException {
        KvCache sent = randomCache(LAYOUT, 20, 3, 7);
        assertEquals(5, sent.blockCount());
        List<Buffer> chunks = KvTransferCodec.encode(sent, FINGERPRINT, 4096);
        assertEquals(KvTransferCodec.encodedSize(LAYOUT, 20), concat(chunks).length);
        assertSameKv(sent, receive(assembler(), chunks));
    }

    @Test
    void emptyChunksAreHarmless() throws KvTransferException {
        KvCache sent = randomCache(LAYOUT, 5, 0, 3);
        KvTransferAssembler assembler = assembler();
        assembler.accept(Buffer.buffer());
        for (Buffer chunk : KvTransferCodec.encode(sent, FINGERPRINT, 64)) {
            assembler.accept(chunk);
            assembler.accept(Buffer.buffer());
        }
        assertSameKv(sent, assembler.finish());
    }

    @Test
    void streamStartsWithMagicAndLittleEndianFields() {
        byte[] stream = concat(KvTransferCodec.encode(randomCache(LAYOUT, 17, 0, 1), FINGERPRINT, 64));
        assertEquals("TKV1", new String(stream, 0, 4, StandardCharsets.US_ASCII));
        ByteBuffer h = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(1, h.getShort(4));
        assertEquals(0, h.get(6));
        assertEquals(FINGERPRINT, h.getLong(8));
        assertEquals(17, h.getInt(32));
        assertEquals(2, h.getInt(36));
        assertEquals(KvTransferCodec.HEADER_BYTES + 2 * LAYOUT.blockBytes() + 4, stream.length);
    }

    @ParameterizedTest
    @ValueSource(ints = {Integer.MIN_VALUE, 0, 1, 63})
    void encodeRejectsChunksTooSmallForTheHeader(int maxChunk) {
        KvCache cache = randomCache(LAYOUT, 3, 0, 1);
        assertThrows(IllegalArgumentException.class, () -> KvTransferCodec.encode(cache, FINGERPRINT, maxChunk));
    }

    @Test
    void encodeRejectsAnEmptyCache() {
        assertThrows(
                IllegalArgumentException.class, () -> KvTransferCodec.encode(new KvCache(LAYOUT), FINGERPRINT, 4096));
        assertThrows(IllegalArgumentException.class, () -> KvTransferCodec.encodedSize(LAYOUT, 0));
    }

    // ---- rejections ----

    /** Valid 100-token stream (7 blocks) whose header field at {@code offset} is overwritten. */
    static byte[] streamWith(int offset, int width, long value) {
        byte[] stream = concat(KvTransferCodec.encode(randomCache(LAYOUT, 100, 0, 42), FINGERPRINT, 1 << 20));
        ByteBuffer b = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
        switch (width) {
            case 1 -> b.put(offset, (byte) value);
            case 2 -> b.putShort(offset, (short) value);
            case 4 -> b.putInt(offset, (int) value);
            case 8 -> b.putLong(offset, value);
            default -> throw new IllegalArgumentException("width " + width);
        }
        return stream;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        // case,              offset, width, value,       reason,          message mentions
        "magic,                    0, 4, 0x31564B55,   BAD_MAGIC,       0x31564b54",
        "version 3,                4, 2, 3,            BAD_VERSION,     version 3",
        "version 0,                4, 2, 0,            BAD_VERSION,     expected 1",
        "dtype fp16,               6, 1, 1,            BAD_DTYPE,       dtype 1",
        "reserved byte,            7, 1, 9,            BAD_HEADER,      got 9",
        "fingerprint,              8, 8, 99,           MODEL_MISMATCH,  123456789abcdef0",
        "layers,                  16, 4, 3,            LAYOUT_MISMATCH, layers=3",
        "kvHeads,                 20, 4, 1,            LAYOUT_MISMATCH, kvHeads=1",
        "headDim,                 24, 4, 8,            LAYOUT_MISMATCH, headDim=8",
        "blockSize,               28, 4, 32,           LAYOUT_MISMATCH, blockSize=32",
        "tokenCount 0,            32, 4, 0,            BAD_HEADER,      got 0",
        "tokenCount negative,     32, 4, -5,           BAD_HEADER,      got -5",
        "tokenCount vs blocks,    32, 4, 200,          BAD_HEADER,      expected 13 blocks",
        "tokenCount huge,         32, 4, 2147483647,   BAD_HEADER,      blockCount 7",
        "blockCount + 1,          36, 4, 8,            BAD_HEADER,      blockCount 8",
        "blockCount 0,            36, 4, 0,            BAD_HEADER,      expected 7 blocks",
    })
    void rejectsABadHeaderOnTheFirstChunk(
            String name, int offset, int width, String value, Reason reason, String mentions) {
        byte[] stream = streamWith(offset, width, Long.decode(value));
        KvTransferAssembler assembler = assembler();
        Buffer first = slice(stream, KvTransferCodec.MIN_CHUNK_BYTES).get(0);
        KvTransferException e = assertThrows(KvTransferException.class, () -> assembler.accept(first));
        assertEquals(reason, e.reason(), e.getMessage());
        assertTrue(e.getMessage().contains(mentions), e.getMessage());
        assertFalse(assembler.complete());
    }

    @Test
    void headerFieldsAreCoveredByTheCrc() {
        // 97 tokens still need 7 blocks, so the header passes; only the CRC can tell.
        byte[] stream = streamWith(32, 4, 97);
        KvTransferAssembler assembler = assembler();
        KvTransferException e = assertThrows(KvTransferException.class, () -> receive(assembler, slice(stream, 4096)));
        assertEquals(Reason.CORRUPTED, e.reason());
    }

    @Test
    void rejectsKvFromAnotherModel() {
        List<Buffer> chunks = KvTransferCodec.encode(randomCache(LAYOUT, 10, 0, 1), FINGERPRINT, 4096);
        KvTransferAssembler assembler = new KvTransferAssembler(LAYOUT, FINGERPRINT + 1, NO_LIMIT);
        KvTransferException e = assertThrows(KvTransferException.class, () -> assembler.accept(chunks.get(0)));
        assertEquals(Reason.MODEL_MISMATCH, e.reason());
        assertTrue(
                e.getMessage().contains("123456789abcdef0") && e.getMessage().contains("123456789abcdef1"),
                e.getMessage());
    }

    @Test
    void rejectsAnotherLayoutNamingBoth() {
        List<Buffer> chunks = KvTransferCodec.encode(randomCache(LAYOUT, 10, 0, 1), FINGERPRINT, 4096);
        KvTransferAssembler assembler = new KvTransferAssembler(new KvLayout(2, 2, 4, 8), FINGERPRINT, NO_LIMIT);
        KvTransferException e = assertThrows(KvTransferException.class, () -> assembler.accept(chunks.get(0)));
        assertEquals(Reason.LAYOUT_MISMATCH, e.reason());
        assertTrue(
                e.getMessage()
                        .contains("got layers=2 kvHeads=2 headDim=4 blockSize=16, expected layers=2 kvHeads=2 "
                                + "headDim=4 blockSize=8"),
                e.getMessage());
    }

    @Test
    void rejectsOverTheLimitBeforeTheBody() {
        long size = KvTransferCodec.encodedSize(LAYOUT, 100);
        List<Buffer> chunks = KvTransferCodec.encode(randomCache(LAYOUT, 100, 0, 1), FINGERPRINT, 64);
        KvTransferAssembler assembler = new KvTransferAssembler(LAYOUT, FINGERPRINT, size - 1);
        KvTransferException e = assertThrows(KvTransferException.class, () -> assembler.accept(chunks.get(0)));
        assertEquals(Reason.TOO_LARGE, e.reason());
        assertTrue(
                e.getMessage().contains(Long.toString(size)) && e.getMessage().contains(Long.toString(size - 1)),
                e.getMessage());
        assertEquals(KvTransferCodec.HEADER_BYTES, assembler.bytesReceived(), "nothing past the header was taken");
    }

    @Test
    void acceptsExactlyAtTheLimit() throws KvTransferException {
        KvCache sent = randomCache(LAYOUT, 100, 0, 1);
        long size = KvTransferCodec.encodedSize(LAYOUT, 100);
        List<Buffer> chunks = KvTransferCodec.encode(sent, FINGERPRINT, 64);
        assertSameKv(sent, receive(new KvTransferAssembler(LAYOUT, FINGERPRINT, size), chunks));
    }

    @Test
    void rejectsExtraBytesInTheLastChunk() {
        List<Buffer> chunks = KvTransferCodec.encode(randomCache(LAYOUT, 10, 0, 1), FINGERPRINT, 1000);
        chunks.get(chunks.size() - 1).appendByte((byte) 0);
        KvTransferAssembler assembler = assembler();
        KvTransferException e = assertThrows(KvTransferException.class, () -> receive(assembler, chunks));
        assertEquals(Reason.OVERSIZED, e.reason());
        assertFalse(assembler.complete());
    }

    @Test
    void rejectsAChunkAfterCompletion() throws KvTransferException {
        List<Buffer> chunks = KvTransferCodec.encode(randomCache(LAYOUT, 10, 0, 1), FINGERPRINT, 1000);
        KvTransferAssembler assembler = assembler();
        receive(assembler, chunks);
        KvTransferException e = assertThrows(
                KvTransferException.class,
                () -> assembler.accept(Buffer.buffer().appendByte((byte) 1)));
        assertEquals(Reason.OVERSIZED, e.reason());
        assertThrows(KvTransferException.class, assembler::finish, "no cache after a failure");
    }

    @ParameterizedTest(name = "finish after {0} bytes")
    @ValueSource(ints = {0, 1, 39, 40, 41, 2000, 14375, 14376, 14379})
    void finishEarlyIsTruncated(int bytes) throws KvTransferException {
        byte[] stream = concat(KvTransferCodec.encode(randomCache(LAYOUT, 100, 0, 1), FINGERPRINT, 1 << 20));
        assertEquals(14380, stream.length);
        KvTransferAssembler assembler = assembler();
        assembler.accept(Buffer.buffer().appendBytes(stream, 0, bytes));
        assertFalse(assembler.complete());
        KvTransferException e = assertThrows(KvTransferException.class, assembler::finish);
        assertEquals(Reason.TRUNCATED, e.reason());
        assertTrue(e.getMessage().contains("received " + bytes), e.getMessage());
    }

    @ParameterizedTest(name = "flip byte {0}")
    @ValueSource(ints = {40, 41, 7000, 14375, 14376, 14379})
    void aFlippedByteIsCorrupted(int offset) {
        byte[] stream = concat(KvTransferCodec.encode(randomCache(LAYOUT, 100, 0, 1), FINGERPRINT, 1 << 20));
        stream[offset] ^= 0x10;
        KvTransferAssembler assembler = assembler();
        List<Buffer> chunks = slice(stream, 997);
        for (int i = 0; i < chunks.size() - 1; i++) {
            int index = i;
            assertDoesNotThrow(() -> assembler.accept(chunks.get(index)));
        }
        KvTransferException e =
                assertThrows(KvTransferException.class, () -> assembler.accept(chunks.get(chunks.size() - 1)));
        assertEquals(Reason.CORRUPTED, e.reason());
        assertFalse(assembler.complete());
    }

    @Test
    void staysFailedWithTheSameReason() {
        byte[] stream = streamWith(0, 4, 0);
        KvTransferAssembler assembler = assembler();
        KvTransferException first =
                assertThrows(KvTransferException.class, () -> assembler.accept(Buffer.buffer(stream)));
        KvTransferException again =
                assertThrows(KvTransferException.class, () -> assembler.accept(Buffer.buffer(stream)));
        assertSame(first, again);
        assertSame(first, assertThrows(KvTransferException.class, assembler::finish));
    }

    @Test
    void differentCachesEncodeDifferently() {
        byte[] a = concat(KvTransferCodec.encode(randomCache(LAYOUT, 5, 0, 1), FINGERPRINT, 4096));
        byte[] b = concat(KvTransferCodec.encode(randomCache(LAYOUT, 5, 0, 2), FINGERPRINT, 4096));
        assertNotEquals(ByteBuffer.wrap(a), ByteBuffer.wrap(b));
    }
}
