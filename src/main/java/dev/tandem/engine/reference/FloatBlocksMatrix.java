package dev.tandem.engine.reference;

/**
 * A float matrix packed for {@link MatmulKernel#ACTIVE}: the llama2.c path, whose products are
 * bit-identical to run.c's. Its products write rows at their own index (matrices that share one
 * product are stacked before packing).
 */
final class FloatBlocksMatrix implements WeightMatrix {
    private final float[][][] blocks;
    private final int rows;
    private final int cols;

    /** The row-major {@code rows} × {@code cols} matrix {@code w}, packed. */
    FloatBlocksMatrix(float[] w, int rows, int cols) {
        this.blocks = MatmulKernel.ACTIVE.pack(w, rows, cols);
        this.rows = rows;
        this.cols = cols;
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
        return MatmulKernel.ACTIVE.rowUnit();
    }

    @Override
    public Product times(float[][] x, int batch) {
        return (out, at, r0, r1) -> {
            if (at != 0) {
                throw new IllegalArgumentException("packed float products write rows at their own index");
            }
            MatmulKernel.ACTIVE.matmulBlocks(out, x, blocks, cols, r0, r1, batch);
        };
    }
}
