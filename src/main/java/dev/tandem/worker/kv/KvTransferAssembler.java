package dev.tandem.worker.kv;

import static dev.tandem.worker.kv.KvTransferCodec.HEADER_BYTES;
import static dev.tandem.worker.kv.KvTransferCodec.TRAILER_BYTES;

import dev.tandem.engine.KvBlock;
import dev.tandem.engine.KvBlockPool;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;
import dev.tandem.engine.KvPrecision;
import dev.tandem.worker.kv.KvTransferException.Reason;
import io.vertx.core.buffer.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * Receives one {@link KvTransferCodec} stream, chunk by chunk, and rebuilds the {@link KvCache}. A
 * version 2 stream leaves out its first {@code startBlock} blocks: they come from the receiver's own
 * cache ({@link PrefixSource}, matched on the stream's token ids); when it no longer holds them all,
 * the stream is still read to its end and checked, but {@link #needFromBlock()} says where to resend
 * from instead of a cache. Every check happens as early as the bytes allow; after the first failure the
 * assembler gives its blocks back and keeps failing with the same exception. Floats are decoded straight
 * into blocks taken as the stream reaches them: never more than the declared size (+ a 64 KiB window).
 *
 * <p>Not thread-safe: feed one transfer from one thread (its event loop).
 */
public final class KvTransferAssembler {
    /** Where a version 2 stream's leading blocks come from on the receiving side. */
    @FunctionalInterface
    public interface PrefixSource {
        /** Up to {@code blocks} leading blocks of {@code tokens}, in order, each held once by the caller. */
        List<KvBlock> prefix(int[] tokens, int blocks);

        PrefixSource NONE = (tokens, blocks) -> List.of();
    }

    private final KvLayout expectedLayout;
    private final long expectedFingerprint;
    private final long maxBytes;
    private final PrefixSource prefixSource;
    private final KvBlockPool pool;
    private final CRC32C crc = new CRC32C();

    private final byte[] header = new byte[HEADER_BYTES];
    private int headerFill;
    private long received;
    /** Declared stream length; -1 until the header is in. */
    private long total = -1;

    private int tokenCount;
    private int blockCount;
    /** Version 2: start block and token ids, as they arrive; empty for version 1. */
    private byte[] extension = new byte[0];

    private int extensionFill;
    private int[] tokenIds;
    private int startBlock;
    private int needFromBlock = -1;

    private KvCache cache;
    private float[] block;
    private int floatPos;
    /** Bytes of a float split across two chunks. */
    private final byte[] partial = new byte[Float.BYTES];

    private int partialFill;
    private final byte[] trailer = new byte[TRAILER_BYTES];
    private int trailerFill;
    private byte[] window;

    private boolean complete;
    private KvTransferException failure;

    /** @param maxBytes the per-request KV limit, compared with the whole declared stream length */
    public KvTransferAssembler(KvLayout expectedLayout, long expectedFingerprint, long maxBytes) {
        this(expectedLayout, expectedFingerprint, maxBytes, PrefixSource.NONE, null);
    }

    /** @param pool where the received blocks come from (null: new arrays) */
    public KvTransferAssembler(
            KvLayout expectedLayout,
            long expectedFingerprint,
            long maxBytes,
            PrefixSource prefixSource,
            KvBlockPool pool) {
        this.expectedLayout = Objects.requireNonNull(expectedLayout, "expectedLayout");
        this.prefixSource = prefixSource;
        this.pool = pool;
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("maxBytes must be positive, got " + maxBytes);
        }
        this.expectedFingerprint = expectedFingerprint;
        this.maxBytes = maxBytes;
    }

    /** Takes the next chunk of the stream; throws as soon as the stream is known to be unusable. */
    public void accept(Buffer chunk) throws KvTransferException {
        if (failure != null) {
            throw failure;
        }
        try {
            append(chunk);
        } catch (KvTransferException e) {
            fail(e);
            throw e;
        }
    }

    /** True once the whole declared stream arrived and its CRC matched. */
    public boolean complete() {
        return complete;
    }

    public long bytesReceived() {
        return received;
    }

    /** Version 2: the sequence's token ids (one per cached position); null for version 1. */
    public int[] tokens() {
        return tokenIds;
    }

    /** Leading blocks the stream left out (0 for version 1). */
    public int startBlock() {
        return startBlock;
    }

    /**
     * -1, or — for a version 2 stream whose left-out blocks this side no longer holds all of — the block
     * to resend from (the leading blocks it does hold).
     */
    public int needFromBlock() {
        return needFromBlock;
    }

    /** The received cache, its length set to the sent token count; fails unless {@link #complete()}. */
    public KvCache finish() throws KvTransferException {
        if (failure != null) {
            throw failure;
        }
        if (needFromBlock >= 0) {
            throw new KvTransferException(
                    Reason.TRUNCATED,
                    "the first " + startBlock + " blocks are not held here; resend from block " + needFromBlock);
        }
        if (!complete) {
            String got = total < 0
                    ? "received " + received + " bytes, the header alone needs " + HEADER_BYTES
                    : "received " + received + " of " + total + " declared bytes";
            KvTransferException e = new KvTransferException(Reason.TRUNCATED, got);
            fail(e);
            throw e;
        }
        cache.setLength(tokenCount);
        return cache;
    }

    private void fail(KvTransferException e) {
        failure = e;
        discard();
        window = null;
    }

    /** The transfer will not be finished (failed, dropped): the blocks received so far go back. */
    public void discard() {
        if (cache != null) {
            cache.free();
            cache = null;
        }
        block = null;
    }

    private void append(Buffer chunk) throws KvTransferException {
        int len = chunk.length();
        int pos = 0;
        if (total < 0) {
            pos = Math.min(HEADER_BYTES - headerFill, len);
            chunk.getBytes(0, pos, header, headerFill);
            headerFill += pos;
            received += pos;
            if (headerFill < HEADER_BYTES) {
                return;
            }
            parseHeader();
        }
        if (len - pos > total - received) {
            throw new KvTransferException(
                    Reason.OVERSIZED,
                    "stream declared " + total + " bytes, received at least " + (received + len - pos));
        }
        if (window == null && pos < len) {
            window = new byte[(int) Math.min(KvTransferCodec.WINDOW_BYTES, total - HEADER_BYTES)];
        }
        // Buffer's public API only copies bytes out; a bounded window keeps that copy small.
        while (pos < len) {
            int n = Math.min(window.length, len - pos);
            chunk.getBytes(pos, pos + n, window, 0);
            consume(n);
            pos += n;
        }
    }

    private void parseHeader() throws KvTransferException {
        ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
        int magic = h.getInt();
        if (magic != KvTransferCodec.MAGIC) {
            throw new KvTransferException(
                    Reason.BAD_MAGIC,
                    String.format("expected magic 0x%08x (\"TKV1\"), got 0x%08x", KvTransferCodec.MAGIC, magic));
        }
        int version = Short.toUnsignedInt(h.getShort());
        if (version != KvTransferCodec.VERSION && version != KvTransferCodec.VERSION_INCREMENTAL) {
            throw new KvTransferException(
                    Reason.BAD_VERSION,
                    "unsupported version " + version + ", expected " + KvTransferCodec.VERSION + " or "
                            + KvTransferCodec.VERSION_INCREMENTAL);
        }
        int dtype = Byte.toUnsignedInt(h.get());
        if (dtype != expectedLayout.precision().dtype()) {
            throw new KvTransferException(
                    Reason.BAD_DTYPE,
                    "unsupported dtype " + dtype + ", expected "
                            + expectedLayout.precision().dtype() + " (" + expectedLayout.precision() + ")");
        }
        int reserved = Byte.toUnsignedInt(h.get());
        if (reserved != 0) {
            throw new KvTransferException(Reason.BAD_HEADER, "reserved byte must be 0, got " + reserved);
        }
        long fingerprint = h.getLong();
        if (fingerprint != expectedFingerprint) {
            throw new KvTransferException(
                    Reason.MODEL_MISMATCH,
                    String.format(
                            "KV is from model fingerprint %016x, expected %016x", fingerprint, expectedFingerprint));
        }
        int layers = h.getInt();
        int kvHeads = h.getInt();
        int headDim = h.getInt();
        int blockSize = h.getInt();
        KvLayout e = expectedLayout;
        if (layers != e.layers() || kvHeads != e.kvHeads() || headDim != e.headDim() || blockSize != e.blockSize()) {
            throw new KvTransferException(
                    Reason.LAYOUT_MISMATCH,
                    String.format(
                            "got layers=%d kvHeads=%d headDim=%d blockSize=%d, expected layers=%d kvHeads=%d headDim=%d blockSize=%d",
                            layers, kvHeads, headDim, blockSize, e.layers(), e.kvHeads(), e.headDim(), e.blockSize()));
        }
        int tokens = h.getInt();
        int blocks = h.getInt();
        if (tokens <= 0) {
            throw new KvTransferException(Reason.BAD_HEADER, "tokenCount must be positive, got " + tokens);
        }
        long expectedBlocks = KvTransferCodec.blocksFor(e, tokens);
        boolean incremental = version == KvTransferCodec.VERSION_INCREMENTAL;
        if (incremental ? blocks < 1 || blocks > expectedBlocks : blocks != expectedBlocks) {
            throw new KvTransferException(
                    Reason.BAD_HEADER,
                    "blockCount " + blocks + " does not match tokenCount " + tokens + ": expected "
                            + (incremental ? "1 to " : "") + expectedBlocks + " blocks of " + blockSize);
        }
        long size;
        try {
            size = incremental
                    ? KvTransferCodec.encodedSize(e, tokens, (int) (expectedBlocks - blocks))
                    : KvTransferCodec.encodedSize(e, tokens);
        } catch (ArithmeticException overflow) {
            size = Long.MAX_VALUE;
        }
        if (size > maxBytes) {
            throw new KvTransferException(
                    Reason.TOO_LARGE,
                    "declared " + size + " bytes (" + tokens + " tokens) exceed the limit of " + maxBytes + " bytes");
        }
        crc.update(header);
        total = size;
        tokenCount = tokens;
        blockCount = blocks;
        cache = new KvCache(e, pool);
        if (incremental) {
            extension = new byte[4 + 4 * tokens];
        }
    }

    /** Version 2: the start block and the token ids are in; the left-out blocks come from this side. */
    private void parseExtension() throws KvTransferException {
        ByteBuffer x = ByteBuffer.wrap(extension).order(ByteOrder.LITTLE_ENDIAN);
        int start = x.getInt();
        long allBlocks = KvTransferCodec.blocksFor(expectedLayout, tokenCount);
        if (start != allBlocks - blockCount) {
            throw new KvTransferException(
                    Reason.BAD_HEADER,
                    "startBlock " + start + " with " + blockCount + " blocks sent does not cover " + tokenCount
                            + " tokens");
        }
        tokenIds = new int[tokenCount];
        x.asIntBuffer().get(tokenIds);
        startBlock = start;
        if (start > 0) {
            List<KvBlock> held = prefixSource.prefix(tokenIds, start);
            if (held.size() < start) {
                needFromBlock = held.size();
                held.forEach(KvBlock::release);
                discard();
                return;
            }
            for (int b = 0; b < start; b++) {
                cache.addBlock(held.get(b));
            }
        }
    }

    /** Consumes {@code n} bytes of {@link #window}; the oversize check guarantees they fit the stream. */
    private void consume(int n) throws KvTransferException {
        int off = 0;
        if (extensionFill < extension.length) {
            off = Math.min(n, extension.length - extensionFill);
            crc.update(window, 0, off);
            System.arraycopy(window, 0, extension, extensionFill, off);
            extensionFill += off;
            if (extensionFill == extension.length) {
                parseExtension();
            }
        }
        int body = (int) Math.max(0, Math.min(n - off, total - TRAILER_BYTES - received - off));
        if (body > 0) {
            crc.update(window, off, body);
            if (cache != null) {
                decode(off, body);
            }
        }
        int rest = n - off - body;
        if (rest > 0) {
            System.arraycopy(window, off + body, trailer, trailerFill, rest);
            trailerFill += rest;
        }
        received += n;
        if (trailerFill == TRAILER_BYTES) {
            verifyCrc();
        }
    }

    /** Decodes {@code window[from, from + len)} into blocks; a value may straddle two windows. */
    private void decode(int from, int len) {
        KvPrecision precision = expectedLayout.precision();
        int size = precision.bytes();
        int off = from;
        int end = from + len;
        if (partialFill > 0) {
            int n = Math.min(size - partialFill, len);
            System.arraycopy(window, from, partial, partialFill, n);
            partialFill += n;
            off += n;
            if (partialFill < size) {
                return;
            }
            nextBlockIfFull();
            block[floatPos++] = precision.decode(
                    ByteBuffer.wrap(partial).order(ByteOrder.LITTLE_ENDIAN).getInt(0));
            partialFill = 0;
        }
        while (off < end) {
            nextBlockIfFull();
            int whole = Math.min((end - off) / size, block.length - floatPos);
            if (whole == 0) {
                partialFill = end - off;
                System.arraycopy(window, off, partial, 0, partialFill);
                java.util.Arrays.fill(partial, partialFill, partial.length, (byte) 0);
                return;
            }
            precision.decode(
                    ByteBuffer.wrap(window, off, whole * size).order(ByteOrder.LITTLE_ENDIAN), block, floatPos, whole);
            floatPos += whole;
            off += whole * size;
        }
    }

    private void nextBlockIfFull() {
        if (block == null || floatPos == block.length) {
            block = cache.appendBlockToFill();
            floatPos = 0;
        }
    }

    private void verifyCrc() throws KvTransferException {
        int sent = ByteBuffer.wrap(trailer).order(ByteOrder.LITTLE_ENDIAN).getInt();
        int actual = (int) crc.getValue();
        if (sent != actual) {
            throw new KvTransferException(
                    Reason.CORRUPTED,
                    String.format("CRC32C of the received stream is %08x, trailer says %08x", actual, sent));
        }
        complete = true;
        block = null;
        window = null;
    }
}
