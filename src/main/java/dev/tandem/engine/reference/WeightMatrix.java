package dev.tandem.engine.reference;

/**
 * A weight matrix of {@link #rows()} × {@link #cols()} as the forward pass multiplies it: floats packed
 * for the active kernel, or a GGUF tensor in its own (possibly quantized) type. Immutable; products of
 * the same matrix may run on several threads at once.
 */
public interface WeightMatrix {
    int rows();

    int cols();

    /** The rows a piece of a product split over threads starts on (the last piece ends at {@link #rows()}). */
    int rowUnit();

    /**
     * The products of this matrix with {@code batch} vectors {@code x[b]} (cols floats each). The vectors
     * are read (or converted to what the matrix's dot products take, e.g. 8-bit blocks) once, here; the
     * returned product then computes any range of output rows, on any thread.
     */
    Product times(float[][] x, int batch);

    /** The products of one batch, computed a range of rows at a time. */
    interface Product {
        /** out[b][at + r] = row r · x[b] for r in [r0, r1) and every b of the batch. */
        void rows(float[][] out, int at, int r0, int r1);
    }
}
