package dev.tandem.worker.kv;

import static dev.tandem.worker.kv.KvTransferCodec.HEADER_BYTES;
import static dev.tandem.worker.kv.KvTransferCodec.TRAILER_BYTES;

import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;
import dev.tandem.worker.kv.KvTransferException.Reason;
import io.vertx.core.buffer.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * Receives one {@link KvTransferCodec} stream, chunk by chunk, and rebuilds the {@link KvCache}.
 * Every check happens as early as the bytes allow; after the first failure the assembler drops its
 * blocks and keeps failing with the same exception. Floats are decoded straight into the cache's
 * blocks, which are allocated as the stream reaches them, so memory never exceeds the declared size
 * (plus one 64 KiB copy window).
 *
 * <p>Not thread-safe: feed one transfer from one thread (its event loop).
 */
public final class KvTransferAssembler {
    private final KvLayout expectedLayout;
    private final long expectedFingerprint;
    private final long maxBytes;
    private final CRC32C crc = new CRC32C();

    private final byte[] header = new byte[HEADER_BYTES];
    private int headerFill;
    private long received;
    /** Declared stream length; -1 until the header is in. */
    private long total = -1;

    private int tokenCount;

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
        this.expectedLayout = Objects.requireNonNull(expectedLayout, "expectedLayout");
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

    /** The received cache, its length set to the sent token count; fails unless {@link #complete()}. */
    public KvCache finish() throws KvTransferException {
        if (failure != null) {
            throw failure;
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
        cache = null;
        block = null;
        window = null;
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
        if (version != KvTransferCodec.VERSION) {
            throw new KvTransferException(
                    Reason.BAD_VERSION, "unsupported version " + version + ", expected " + KvTransferCodec.VERSION);
        }
        int dtype = Byte.toUnsignedInt(h.get());
        if (dtype != KvTransferCodec.DTYPE_FLOAT32) {
            throw new KvTransferException(
                    Reason.BAD_DTYPE,
                    "unsupported dtype " + dtype + ", expected " + KvTransferCodec.DTYPE_FLOAT32 + " (float32)");
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
        if (blocks != expectedBlocks) {
            throw new KvTransferException(
                    Reason.BAD_HEADER,
                    "blockCount " + blocks + " does not match tokenCount " + tokens + ": expected " + expectedBlocks
                            + " blocks of " + blockSize);
        }
        long size;
        try {
            size = KvTransferCodec.encodedSize(e, tokens);
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
        cache = new KvCache(e);
    }

    /** Consumes {@code n} bytes of {@link #window}; the oversize check guarantees they fit the stream. */
    private void consume(int n) throws KvTransferException {
        int body = (int) Math.max(0, Math.min(n, total - TRAILER_BYTES - received));
        if (body > 0) {
            crc.update(window, 0, body);
            decode(body);
        }
        int rest = n - body;
        if (rest > 0) {
            System.arraycopy(window, body, trailer, trailerFill, rest);
            trailerFill += rest;
        }
        received += n;
        if (trailerFill == TRAILER_BYTES) {
            verifyCrc();
        }
    }

    private void decode(int len) {
        int off = 0;
        if (partialFill > 0) {
            int n = Math.min(Float.BYTES - partialFill, len);
            System.arraycopy(window, 0, partial, partialFill, n);
            partialFill += n;
            off = n;
            if (partialFill < Float.BYTES) {
                return;
            }
            nextBlockIfFull();
            ByteBuffer.wrap(partial)
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .asFloatBuffer()
                    .get(block, floatPos++, 1);
            partialFill = 0;
        }
        while (off < len) {
            nextBlockIfFull();
            int whole = Math.min((len - off) / Float.BYTES, block.length - floatPos);
            if (whole == 0) {
                partialFill = len - off;
                System.arraycopy(window, off, partial, 0, partialFill);
                return;
            }
            ByteBuffer.wrap(window, off, whole * Float.BYTES)
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .asFloatBuffer()
                    .get(block, floatPos, whole);
            floatPos += whole;
            off += whole * Float.BYTES;
        }
    }

    private void nextBlockIfFull() {
        if (block == null || floatPos == block.length) {
            block = new float[expectedLayout.blockFloats()];
            cache.addBlock(block);
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
