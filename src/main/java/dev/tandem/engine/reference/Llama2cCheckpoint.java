package dev.tandem.engine.reference;

import dev.tandem.engine.ModelConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Reads llama2.c's legacy (version 0) checkpoint: 7 little-endian int32 (dim, hidden_dim, n_layers,
 * n_heads, n_kv_heads, vocab_size, seq_len; a negative vocab_size means the classifier is stored
 * separately at the end), then the float32 tensors in {@link ModelWeights#tensors()} order, with two
 * unused seq_len × head_size/2 RoPE tables between the final norm and the classifier.
 */
public final class Llama2cCheckpoint {
    static final int HEADER_BYTES = 7 * Integer.BYTES;
    /** "ak42", the magic number of llama2.c's newer (version 1+) export formats. */
    private static final int NEW_FORMAT_MAGIC = 0x616b3432;

    private static final int CHUNK_BYTES = 1 << 20;

    private Llama2cCheckpoint() {}

    /** Parses the header of a checkpoint, with file-size validation; no weights are read. */
    public static ModelConfig readConfig(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            return header(file, ch);
        }
    }

    public static ModelWeights read(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ModelConfig config = header(file, ch);
            ModelWeights weights = new ModelWeights(config);
            ByteBuffer bytes = ByteBuffer.allocateDirect(CHUNK_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            long pos = HEADER_BYTES;
            for (ModelWeights.Tensor t : weights.tensors()) {
                if (t.name().equals("classifier")) {
                    pos += ropeTableBytes(config);
                }
                pos = readFloats(file, ch, pos, t.data(), bytes);
            }
            return weights;
        }
    }

    /** Bytes of the two unused RoPE tables (freq_cis_real and freq_cis_imag). */
    static long ropeTableBytes(ModelConfig c) {
        return 2L * ((long) c.seqLen() * c.headSize() / 2) * Float.BYTES;
    }

    /** The exact size in bytes of a legacy checkpoint of this shape. */
    public static long fileSize(ModelConfig c) {
        long dim = c.dim();
        long perLayer = 2 * dim + dim * dim * 2 + 2 * c.kvDim() * dim + 3 * dim * c.hiddenDim();
        long floats = (long) c.vocabSize() * dim + c.layers() * perLayer + dim;
        if (!c.sharedClassifier()) {
            floats += (long) c.vocabSize() * dim;
        }
        return HEADER_BYTES + floats * Float.BYTES + ropeTableBytes(c);
    }

    private static ModelConfig header(Path file, FileChannel ch) throws IOException {
        long size = ch.size();
        if (size < HEADER_BYTES) {
            throw new IOException(file + ": not a llama2.c checkpoint: " + size + " bytes is shorter than the "
                    + HEADER_BYTES + "-byte header");
        }
        ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        readFully(file, ch, 0, h);
        h.flip();
        int[] v = new int[7];
        for (int i = 0; i < 7; i++) {
            v[i] = h.getInt();
        }
        if (v[0] == NEW_FORMAT_MAGIC) {
            throw new IOException(file + ": llama2.c version 1+ export (magic \"ak42\"); only the legacy "
                    + "version 0 float32 format is supported (export.py --version 0)");
        }
        if (v[5] == Integer.MIN_VALUE) {
            throw new IOException(file + ": malformed llama2.c header: vocab_size " + v[5]);
        }
        ModelConfig config;
        try {
            config = new ModelConfig(v[0], v[1], v[2], v[3], v[4], Math.abs(v[5]), v[6], v[5] > 0);
        } catch (IllegalArgumentException e) {
            throw new IOException(
                    file + ": malformed llama2.c header (dim=" + v[0] + ", hidden_dim=" + v[1]
                            + ", n_layers=" + v[2] + ", n_heads=" + v[3] + ", n_kv_heads=" + v[4] + ", vocab_size="
                            + v[5]
                            + ", seq_len=" + v[6] + "): " + e.getMessage(),
                    e);
        }
        long expected = fileSize(config);
        if (size < expected) {
            throw new IOException(file + ": truncated llama2.c checkpoint: the header (" + config + ") needs "
                    + expected + " bytes, the file has " + size);
        }
        if (size > expected) {
            throw new IOException(file + ": " + (size - expected) + " unexpected bytes after the weights of "
                    + config + " (expected " + expected + " bytes, the file has " + size
                    + "); is it a legacy llama2.c float32 checkpoint?");
        }
        return config;
    }

    private static long readFloats(Path file, FileChannel ch, long pos, float[] dst, ByteBuffer bytes)
            throws IOException {
        int done = 0;
        while (done < dst.length) {
            int n = Math.min(dst.length - done, bytes.capacity() / Float.BYTES);
            bytes.clear().limit(n * Float.BYTES);
            readFully(file, ch, pos, bytes);
            bytes.flip();
            FloatBuffer floats = bytes.asFloatBuffer();
            floats.get(dst, done, n);
            done += n;
            pos += (long) n * Float.BYTES;
        }
        return pos;
    }

    private static void readFully(Path file, FileChannel ch, long pos, ByteBuffer dst) throws IOException {
        while (dst.hasRemaining()) {
            int n = ch.read(dst, pos);
            if (n < 0) {
                throw new IOException(file + ": unexpected end of file at byte " + pos);
            }
            pos += n;
        }
    }
}
