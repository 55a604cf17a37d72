package dev.tandem.engine.reference;

import static dev.tandem.engine.reference.TransformerMath.BLOCK_ROWS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.tandem.engine.SplitMix64;
import java.util.Arrays;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Both kernels, each on its own layout ({@link MatmulKernel#pack}), against
 * {@link TransformerMath#matmulBlocks}, bit for bit: rows not a multiple of the vector length, n not a multiple of 8, every batch 1..17 (groups of four and what is left), several
 * blocks of rows, and stories15M's classifier for a batch of 16. The build runs tests with the vector
 * module, so the vector kernel is exercised; the scalar one is called directly.
 */
class MatmulKernelTest {

    static Stream<Arguments> shapes() {
        Stream<Arguments> fixed = Stream.of(
                // n, d, batch
                Arguments.of(288, 32000, 16), // the classifier: 15 whole blocks, then 1280 rows
                Arguments.of(288, 864, 4), // wq, wk, wv stacked
                Arguments.of(768, 288, 6), // w2: n past any strip's L1 share
                Arguments.of(37, 11, 3), // fewer rows than a strip: the narrow part alone
                Arguments.of(1, 40, 2),
                Arguments.of(13, 2 * BLOCK_ROWS + 77, 5),
                Arguments.of(9, 2 * BLOCK_ROWS, 3)); // no narrow part
        // 2048 + 61 rows: a whole block, then whole strips and a narrower last part, for 8 or 16 lanes
        Stream<Arguments> batches = IntStream.rangeClosed(1, 17).mapToObj(b -> Arguments.of(29, BLOCK_ROWS + 61, b));
        return Stream.concat(fixed, batches);
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void vectorKernelGivesTheScalarBits(int n, int d, int batch) {
        MatmulKernel vector = vectorKernel();
        assumeTrue(vector != null, "no jdk.incubator.vector, or vectors under 256 bits");
        assertSameBits(vector, n, d, batch, 0, d);
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void scalarFallbackGivesTheScalarBits(int n, int d, int batch) {
        assertSameBits(MatmulKernel.SCALAR, n, d, batch, 0, d);
    }

    /** A range of rows (how ParallelMatmul splits) computes those rows and writes no other. */
    @Test
    void aRangeOfBlocksWritesOnlyItsRows() {
        MatmulKernel vector = vectorKernel();
        for (MatmulKernel kernel : vector == null
                ? new MatmulKernel[] {MatmulKernel.SCALAR}
                : new MatmulKernel[] {MatmulKernel.SCALAR, vector}) {
            assertSameBits(kernel, 45, 3 * BLOCK_ROWS + 100, 7, BLOCK_ROWS, 2 * BLOCK_ROWS);
            assertSameBits(kernel, 45, 3 * BLOCK_ROWS + 100, 7, 3 * BLOCK_ROWS, 3 * BLOCK_ROWS + 100);
        }
    }

    /** Ranges on the kernel's row unit, inside a block or across two (how the partners split one stream). */
    @Test
    void aRangeOfRowUnitsWritesOnlyItsRows() {
        MatmulKernel vector = vectorKernel();
        assumeTrue(vector != null, "no jdk.incubator.vector, or vectors under 256 bits");
        int unit = vector.rowUnit();
        assertEquals(0, BLOCK_ROWS % unit, "a block must split on row units");
        int d = 2 * BLOCK_ROWS + unit + 7; // the last block ends with a narrower strip
        assertSameBits(vector, 45, d, 1, unit, 5 * unit);
        assertSameBits(vector, 45, d, 3, BLOCK_ROWS - unit, BLOCK_ROWS + 2 * unit);
        assertSameBits(vector, 45, d, 1, 2 * BLOCK_ROWS + unit, d);
        assertSameBits(vector, 45, d, 2, 2 * BLOCK_ROWS, 2 * BLOCK_ROWS + unit);
    }

    @Test
    void theVectorKernelIsChosenWhenTheModuleIsPresentUnlessScalarIsAsked() {
        assertSame(MatmulKernel.SCALAR, MatmulKernel.select("scalar"));
        MatmulKernel vector = vectorKernel();
        if (vector == null) {
            assertSame(MatmulKernel.SCALAR, MatmulKernel.select("auto"));
        } else {
            assertTrue(MatmulKernel.select("auto").describe().startsWith("vector ("));
            assertEquals(vector.describe(), ReferenceEngine.matmulKernel());
        }
    }

    /** The vector kernel, or null where it cannot run (this JVM started without the module, narrow vectors). */
    private static MatmulKernel vectorKernel() {
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            return null;
        }
        return VectorMatmul.create();
    }

    private static void assertSameBits(MatmulKernel kernel, int n, int d, int batch, int r0, int r1) {
        SplitMix64 rng = new SplitMix64(17L * n + 3L * d + batch);
        float[] w = EngineTestSupport.uniform(rng, n * d);
        float[][][] blocks = TransformerMath.rowBlocks(w, d, n);
        float[][] x = EngineTestSupport.uniform(rng, batch, n);
        x[0][n - 1] = -0.0f; // a signed zero product: the sums must start at +0 as the scalar ones do
        float[][] expected = new float[batch][d];
        TransformerMath.matmulBlocks(expected, x, blocks, n, d, batch);
        float[][][] packed = kernel.pack(w, d, n); // the vector kernel's own layout
        float[][] out = new float[batch][d];
        for (float[] row : out) {
            Arrays.fill(row, Float.NaN); // every row of the range must be written, no other
        }
        kernel.matmulBlocks(out, x, packed, n, r0, r1, batch);
        for (int b = 0; b < batch; b++) {
            for (int i = 0; i < d; i++) {
                int want = i >= r0 && i < r1
                        ? Float.floatToRawIntBits(expected[b][i])
                        : Float.floatToRawIntBits(Float.NaN);
                assertEquals(want, Float.floatToRawIntBits(out[b][i]), kernel.describe() + " b=" + b + " i=" + i);
            }
        }
    }
}
