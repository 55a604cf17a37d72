package dev.tandem.engine.reference;

/**
 * The batched product of {@link TransformerMath#matmulBlocks} for output rows {@code [r0, r1)} (on block
 * boundaries, or r1 = d): every implementation gives exactly its bits. {@link #ACTIVE} is the Vector API
 * kernel when the JVM was started with {@code --add-modules jdk.incubator.vector} (and has vectors of 256
 * bits or more), else the plain-Java one; {@code -Dtandem.matmul=scalar} forces the plain one, for A/B runs.
 */
interface MatmulKernel {
    /** The row-major d × n matrix w in this kernel's layout, blocks of {@link TransformerMath#BLOCK_ROWS} rows. */
    float[][][] pack(float[] w, int d, int n);

    /** The products over a matrix from {@link #pack}, output rows [r0, r1): multiples of {@link #rowUnit} or d. */
    void matmulBlocks(float[][] out, float[][] x, float[][][] blocks, int n, int r0, int r1, int batch);

    /** The rows a range of {@link #matmulBlocks} starts and ends on (the matrix's end aside). */
    int rowUnit();

    /** Which implementation runs, for benchmark output: "scalar" or "vector (512-bit)". */
    String describe();

    /** TransformerMath's loops, which C2 vectorizes one sequence at a time. */
    MatmulKernel SCALAR = new MatmulKernel() {
        @Override
        public float[][][] pack(float[] w, int d, int n) {
            return TransformerMath.rowBlocks(w, d, n);
        }

        @Override
        public void matmulBlocks(float[][] out, float[][] x, float[][][] blocks, int n, int r0, int r1, int batch) {
            TransformerMath.matmulBlocks(out, x, blocks, n, r0, r1, batch);
        }

        @Override
        public int rowUnit() {
            return TransformerMath.BLOCK_ROWS;
        }

        @Override
        public String describe() {
            return "scalar";
        }
    };

    MatmulKernel ACTIVE = select(System.getProperty("tandem.matmul", "auto"));

    /**
     * The vector kernel unless {@code wanted} is "scalar" or it cannot run here. The module is looked up
     * before VectorMatmul is touched: loading it without the module would fail (caught all the same).
     */
    static MatmulKernel select(String wanted) {
        if ("scalar".equals(wanted)
                || ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            return SCALAR;
        }
        try {
            MatmulKernel vector = VectorMatmul.create();
            return vector != null ? vector : SCALAR;
        } catch (LinkageError e) {
            return SCALAR;
        }
    }
}
