package dev.tandem.engine.gguf;

import dev.tandem.engine.reference.WeightMatrix;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A GGUF tensor multiplied in its own type, straight from the file's mapping: a product converts the
 * batch's vectors once to what the type's dot product takes ({@link GgmlActivations}), then each row is
 * read once and unpacked once for the whole batch ({@link GgmlRowDot}). Nothing the size of the matrix
 * is ever allocated.
 */
public final class GgmlMatrix implements WeightMatrix {
    private final GgmlType type;
    private final ByteBuffer data;
    private final int rows;
    private final int cols;
    private final int rowBytes;

    public GgmlMatrix(GgmlType type, ByteBuffer data, int rows, int cols) {
        GgmlActivations.formFor(type); // refuses types without a dot product here
        if (cols % type.blockElements() != 0) {
            throw new GgufFormatException(type + " rows of " + cols + " do not fill blocks of " + type.blockElements());
        }
        if (type.blockElements() == 1 && cols % GgmlDotKernel.LANES != 0) {
            throw new GgufFormatException(type + " rows of " + cols + " are not a multiple of " + GgmlDotKernel.LANES);
        }
        long bytes = type.bytes((long) rows * cols);
        if (data.capacity() < bytes) {
            throw new GgufFormatException("a " + rows + " x " + cols + " " + type + " matrix needs " + bytes
                    + " bytes, the tensor has " + data.capacity());
        }
        this.type = type;
        this.data = data;
        this.rows = rows;
        this.cols = cols;
        this.rowBytes = Math.toIntExact(type.bytes(cols));
    }

    /** The matrix tensor {@code name} of {@code file} (ggml's dims: [cols, rows]). */
    public static GgmlMatrix of(GgufFile file, String name) throws IOException {
        GgufTensorInfo tensor = file.tensor(name);
        long[] dims = tensor.dims();
        if (dims.length != 2) {
            throw new GgufFormatException(name + " is not a matrix: " + java.util.Arrays.toString(dims));
        }
        return new GgmlMatrix(tensor.type(), file.data(tensor), Math.toIntExact(dims[1]), Math.toIntExact(dims[0]));
    }

    public GgmlType type() {
        return type;
    }

    @Override
    public int rows() {
        return rows;
    }

    @Override
    public int cols() {
        return cols;
    }

    @Override
    public int rowUnit() {
        return 1;
    }

    @Override
    public Product times(float[][] x, int batch) {
        GgmlActivations a = GgmlActivations.of(GgmlActivations.formFor(type), x, batch, cols);
        return (out, at, r0, r1) -> {
            byte[] row = new byte[rowBytes];
            GgmlRowDot dot = new GgmlRowDot(type, cols, batch > 1);
            for (int r = r0; r < r1; r++) {
                data.get(Math.toIntExact((long) r * rowBytes), row);
                dot.load(row);
                for (int b = 0; b < batch; b++) {
                    out[b][at + r] = dot.dot(a, b);
                }
            }
        };
    }

    /** Row {@code r} as floats: an embedding lookup (a token's row of {@code token_embd}). */
    public void row(int r, float[] out) {
        GgmlDequant.row(type, data, (long) r * cols, cols, out, 0);
    }

    /** The bytes the tensor takes (mapped, not on the heap). */
    public long bytes() {
        return (long) rows * rowBytes;
    }
}
