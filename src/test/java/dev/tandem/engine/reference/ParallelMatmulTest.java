package dev.tandem.engine.reference;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.engine.SplitMix64;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Rows split over threads give exactly the single-threaded products: every output row, for every
 * split (shares of uneven size, a last share shorter than the rest, more threads than the machine has,
 * pieces on the spinning partners).
 */
class ParallelMatmulTest {

    static Stream<Arguments> shapes() {
        return Stream.of(
                // n, d, batch, threads
                Arguments.of(288, 32000, 1, 2), // stories15M's classifier: the product that dominates decode
                Arguments.of(288, 768, 16, 2), // one block of rows: the batch splits by sequence
                Arguments.of(768, 288, 5, 2), // by sequence, shares of uneven size
                Arguments.of(288, 2000, 1, 2), // one block, one sequence: split by strips (vector kernel) or not at all
                Arguments.of(288, 864, 1, 2), // stories15M's wqkv for one stream: pieces over the partners
                Arguments.of(768, 288, 1, 2), // its w2: pieces of uneven size
                Arguments.of(288, 1000, 1, 4), // a last strip narrower than the others
                Arguments.of(288, 32000, 3, 2), // the classifier for a batch: whole blocks
                Arguments.of(768, 288, 4, 3),
                Arguments.of(513, 1000, 3, 7), // d not a multiple of 16, shares of uneven size
                Arguments.of(64, 176, 2, 4)); // below the hand-off threshold: stays on the caller
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void splittingByRowsOrSequencesChangesNoBit(int n, int d, int batch, int threads) {
        SplitMix64 rng = new SplitMix64(7L * n + d);
        float[] w = EngineTestSupport.uniform(rng, n * d);
        float[][][] blocks = TransformerMath.rowBlocks(w, d, n);
        float[][] x = EngineTestSupport.uniform(rng, batch, n);
        float[][] expected = new float[batch][d];
        TransformerMath.matmulBlocks(expected, x, blocks, n, d, batch);
        float[][] out = new float[batch][d];
        for (float[] row : out) {
            java.util.Arrays.fill(row, Float.NaN); // every row must be written
        }
        // in the layout of the kernel it runs (the vector kernel's differs)
        new ParallelMatmul(threads).matmul(out, x, new FloatBlocksMatrix(w, d, n), batch);
        for (int b = 0; b < batch; b++) {
            for (int i = 0; i < d; i++) {
                assertEquals(
                        Float.floatToIntBits(expected[b][i]), Float.floatToIntBits(out[b][i]), "b=" + b + " i=" + i);
            }
        }
    }
}
