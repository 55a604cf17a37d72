package dev.tandem.worker.kv;

import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;
import dev.tandem.engine.KvPrecision;
import io.vertx.core.buffer.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Binary wire format of a KV cache, sent as consecutive slices of one little-endian byte stream:
 *
 * <pre>
 * header  (40 bytes) magic "TKV1" | version u16 | dtype u8 | reserved u8 (0) | fingerprint i64 |
 *                    layers i32 | kvHeads i32 | headDim i32 | blockSize i32 | tokenCount i32 | blockCount i32
 * blocks  blockCount × layout.blockFloats() values, each block [layer][K|V][slot][kvDim], each value
 *         float32 (dtype 0), or f16 (1) or bf16 (2) for models whose K/V are exact in them
 * trailer CRC32C of everything before it, u32
 * </pre>
 *
 * Only the blocks covering tokenCount are sent. Version 2 ({@link #VERSION_INCREMENTAL}) serves KV
 * reuse: after the header comes {@code startBlock i32} and the {@code tokenCount} token ids (i32 each) of
 * the sequence, and the blocks are those from {@code startBlock} on — the receiver already holds the
 * ones before (it checks them against the tokens) or asks for them. {@link KvTransferAssembler} is the
 * receiving side.
 */
public final class KvTransferCodec {
    /** The bytes "TKV1" read as a little-endian int, so the stream starts with those four letters. */
    public static final int MAGIC = 'T' | 'K' << 8 | 'V' << 16 | '1' << 24;

    public static final int VERSION = 1;
    /** The sequence's tokens travel along and the first {@code startBlock} blocks do not. */
    public static final int VERSION_INCREMENTAL = 2;

    public static final int HEADER_BYTES = 40;
    public static final int TRAILER_BYTES = 4;
    /** Smallest chunk accepted by {@link #encode}: the header always fits in the first chunk. */
    public static final int MIN_CHUNK_BYTES = 64;

    static final int WINDOW_BYTES = 64 << 10;

    private KvTransferCodec() {}

    /** Exact byte length of the stream for {@code tokenCount} tokens: lets a sender check a limit before encoding. */
    public static long encodedSize(KvLayout layout, int tokenCount) {
        if (tokenCount <= 0) {
            throw new IllegalArgumentException("tokenCount must be positive, got " + tokenCount);
        }
        long payload = Math.multiplyExact(blocksFor(layout, tokenCount), layout.wireBlockBytes());
        return Math.addExact(HEADER_BYTES + TRAILER_BYTES, payload);
    }

    /** Exact byte length of a version 2 stream: the tokens, then the blocks from {@code startBlock} on. */
    public static long encodedSize(KvLayout layout, int tokenCount, int startBlock) {
        long blocks = blocksFor(layout, tokenCount);
        if (startBlock < 0 || startBlock >= blocks) {
            throw new IllegalArgumentException("startBlock " + startBlock + " must name one of the " + blocks
                    + " blocks of " + tokenCount + " tokens");
        }
        long payload = Math.multiplyExact(blocks - startBlock, layout.wireBlockBytes());
        return Math.addExact(HEADER_BYTES + TRAILER_BYTES + 4 + 4L * tokenCount, payload);
    }

    /** ceil(tokens / blockSize) without the int overflow of {@link KvLayout#blocksFor} near Integer.MAX_VALUE. */
    static long blocksFor(KvLayout layout, long tokens) {
        return (tokens + layout.blockSize() - 1) / layout.blockSize();
    }

    /**
     * Encodes the first {@code cache.length()} tokens of {@code cache} into chunks of at most
     * {@code maxChunkBytes} (all full except the last).
     */
    public static List<Buffer> encode(KvCache cache, long modelFingerprint, int maxChunkBytes) {
        return encode(cache, modelFingerprint, maxChunkBytes, null, 0);
    }

    /**
     * Encodes the cache as version 2 when {@code tokens} (the sequence's token ids, one per cached
     * position) is given — the blocks from {@code startBlock} on —, else as version 1.
     */
    public static List<Buffer> encode(
            KvCache cache, long modelFingerprint, int maxChunkBytes, int[] tokens, int startBlock) {
        if (maxChunkBytes < MIN_CHUNK_BYTES) {
            throw new IllegalArgumentException(
                    "maxChunkBytes must be at least " + MIN_CHUNK_BYTES + ", got " + maxChunkBytes);
        }
        KvLayout layout = cache.layout();
        int length = cache.length();
        int blocks = (int) blocksFor(layout, length);
        if (cache.blockCount() < blocks) {
            throw new IllegalArgumentException(
                    length + " tokens need " + blocks + " blocks, cache has " + cache.blockCount());
        }
        if (tokens != null && tokens.length != length) {
            throw new IllegalArgumentException(tokens.length + " token ids for a cache of " + length + " positions");
        }
        long total = tokens == null ? encodedSize(layout, length) : encodedSize(layout, length, startBlock);
        int first = tokens == null ? 0 : startBlock;
        byte[] head = header(layout, modelFingerprint, length, blocks - first, tokens, first);
        Writer writer = new Writer(cache, first, blocks, head, layout.precision());
        List<Buffer> chunks = new ArrayList<>((int) ((total + maxChunkBytes - 1) / maxChunkBytes));
        // Buffer.buffer(byte[]) would copy anyway, so fill a small reused window and append it: no
        // chunk-sized garbage next to the chunks themselves.
        byte[] window = new byte[(int) Math.min(WINDOW_BYTES, Math.min(maxChunkBytes, total))];
        for (long done = 0; done < total; ) {
            int len = (int) Math.min(maxChunkBytes, total - done);
            Buffer chunk = Buffer.buffer(len);
            for (int filled = 0; filled < len; ) {
                int n = Math.min(window.length, len - filled);
                writer.fill(window, n);
                chunk.appendBytes(window, 0, n);
                filled += n;
            }
            chunks.add(chunk);
            done += len;
        }
        return chunks;
    }

    /** The header, and for version 2 the start block and the token ids after it. */
    private static byte[] header(
            KvLayout layout, long fingerprint, int tokens, int blocks, int[] tokenIds, int startBlock) {
        int extension = tokenIds == null ? 0 : 4 + 4 * tokenIds.length;
        ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES + extension).order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(MAGIC)
                .putShort((short) (tokenIds == null ? VERSION : VERSION_INCREMENTAL))
                .put((byte) layout.precision().dtype())
                .put((byte) 0)
                .putLong(fingerprint)
                .putInt(layout.layers())
                .putInt(layout.kvHeads())
                .putInt(layout.headDim())
                .putInt(layout.blockSize())
                .putInt(tokens)
                .putInt(blocks);
        if (tokenIds != null) {
            h.putInt(startBlock);
            for (int t : tokenIds) {
                h.putInt(t);
            }
        }
        return h.array();
    }

    /**
     * Walks the stream header → floats → trailer, one window at a time. A float or the trailer may
     * straddle two windows: its bytes wait in {@code pending}.
     */
    private static final class Writer {
        private final KvCache cache;
        /** One past the last block to send. */
        private final int blocks;

        private final byte[] header;
        private final KvPrecision precision;
        private final CRC32C crc = new CRC32C();
        private final ByteBuffer pending =
                ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).limit(0);
        private int headerPos;
        private int block;
        private int floatPos;
        private boolean trailerStarted;

        Writer(KvCache cache, int firstBlock, int blocks, byte[] header, KvPrecision precision) {
            this.cache = cache;
            this.precision = precision;
            this.block = firstBlock;
            this.blocks = blocks;
            this.header = header;
        }

        /** Writes the next {@code len} bytes of the stream into {@code dst[0, len)}. */
        void fill(byte[] dst, int len) {
            ByteBuffer out = ByteBuffer.wrap(dst, 0, len).order(ByteOrder.LITTLE_ENDIAN);
            while (out.hasRemaining()) {
                if (pending.hasRemaining()) {
                    int n = Math.min(pending.remaining(), out.remaining());
                    out.put(pending.array(), pending.position(), n);
                    pending.position(pending.position() + n);
                } else if (headerPos < header.length) {
                    int n = Math.min(header.length - headerPos, out.remaining());
                    out.put(header, headerPos, n);
                    headerPos += n;
                } else if (block < blocks) {
                    float[] b = cache.block(block);
                    int size = precision.bytes();
                    int whole = Math.min(out.remaining() / size, b.length - floatPos);
                    if (whole > 0 && precision == KvPrecision.F32) {
                        out.asFloatBuffer().put(b, floatPos, whole);
                        out.position(out.position() + whole * Float.BYTES);
                        floatPos += whole;
                    } else if (whole > 0) {
                        for (int i = 0; i < whole; i++) {
                            out.putShort((short) precision.encode(b[floatPos++]));
                        }
                    } else {
                        pending.clear();
                        pending.putInt(0, precision.encode(b[floatPos++])).limit(size);
                    }
                    if (floatPos == b.length) {
                        block++;
                        floatPos = 0;
                    }
                } else if (!trailerStarted) {
                    crc.update(dst, 0, out.position());
                    trailerStarted = true;
                    pending.clear();
                    pending.putInt(0, (int) crc.getValue()).limit(TRAILER_BYTES);
                } else {
                    throw new IllegalStateException("window runs past the end of the stream");
                }
            }
            if (!trailerStarted) {
                crc.update(dst, 0, len);
            }
        }
    }
}
