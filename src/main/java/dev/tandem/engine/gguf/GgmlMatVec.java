package dev.tandem.engine.gguf;

import java.nio.ByteBuffer;

/**
 * A weight matrix in its file type times a float vector, one row at a time: each row is read block by
 * block into a scratch of one block, so a quantized model is multiplied in its own form and never
 * expanded. Rows are ggml's: {@code cols} contiguous elements ({@code dims[0]}), row {@code r} after
 * {@code r} whole rows. Sums run in float, in element order.
 */
public final class GgmlMatVec {
    /** The largest block (K-quants: 256 elements). */
    private static final int MAX_BLOCK = 256;

    private final GgmlType type;
    private final ByteBuffer weights;
    private final int rows;
    private final int cols;

    public GgmlMatVec(GgmlType type, ByteBuffer weights, int rows, int cols) {
        if (cols % type.blockElements() != 0) {
            throw new GgufFormatException(type + " rows of " + cols + " do not fill blocks of " + type.blockElements());
        }
        if (weights.capacity() < type.bytes((long) rows * cols)) {
            throw new GgufFormatException("a " + rows + " x " + cols + " " + type + " matrix needs "
                    + type.bytes((long) rows * cols) + " bytes, the tensor has " + weights.capacity());
        }
        this.type = type;
        this.weights = weights;
        this.rows = rows;
        this.cols = cols;
    }

    public static GgmlMatVec of(GgufFile file, GgufTensorInfo tensor) throws java.io.IOException {
        long[] dims = tensor.dims();
        if (dims.length != 2) {
            throw new GgufFormatException(tensor.name() + " is not a matrix: " + java.util.Arrays.toString(dims));
        }
        return new GgmlMatVec(tensor.type(), file.data(tensor), (int) dims[1], (int) dims[0]);
    }

    public int rows() {
        return rows;
    }

    public int cols() {
        return cols;
    }

    /** Row {@code r} · {@code x}. {@code scratch} holds one block ({@link #scratch()}); one per thread. */
    public float dot(int r, float[] x, float[] scratch) {
        int per = type.blockElements();
        long first = (long) r * cols;
        float sum = 0;
        for (int c = 0; c < cols; c += per) {
            GgmlDequant.row(type, weights, first + c, per, scratch, 0);
            for (int j = 0; j < per; j++) {
                sum += scratch[j] * x[c + j];
            }
        }
        return sum;
    }

    /** {@code out[r] = row r · x} for rows {@code from} (inclusive) to {@code to} (exclusive): a thread's share. */
    public void multiply(float[] x, float[] out, int from, int to) {
        float[] scratch = scratch();
        for (int r = from; r < to; r++) {
            out[r] = dot(r, x, scratch);
        }
    }

    /** A scratch for {@link #dot}: one block of any type. */
    public static float[] scratch() {
        return new float[MAX_BLOCK];
    }

    /** Row {@code r} as floats (an embedding lookup: a token's row of {@code token_embd}). */
    public void row(int r, float[] out) {
        GgmlDequant.row(type, weights, (long) r * cols, cols, out, 0);
    }
}
