package dev.tandem.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.tandem.engine.reference.WeightMatrix;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A GGUF tensor multiplied in its own type gives the product of its expanded floats with the activations
 * as llama.cpp rounds them (within the rounding: 8 bits for quantized types, f16/bf16 for half types),
 * whatever the batch and the split of its rows; its rows read back as the expanded floats.
 */
class GgmlMatrixTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(names = {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q5_0", "Q4_K", "Q6_K"})
    void multipliesAsItsExpandedFloats(GgmlType type) throws IOException {
        int rows = 7;
        int cols = 512;
        Random random = new Random(3);
        float[] w = new float[rows * cols];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) random.nextGaussian();
        }
        float[][] x = new float[3][cols];
        for (float[] v : x) {
            for (int i = 0; i < cols; i++) {
                v[i] = (float) random.nextGaussian();
            }
        }
        Path file = dir.resolve(type + ".gguf");
        new GgufWriter()
                .tensor("m", new long[] {cols, rows}, type, GgmlQuantize.quantize(type, w))
                .write(file);
        GgufFile g = GgufFile.open(file);
        GgmlMatrix m = GgmlMatrix.of(g, "m");
        assertEquals(rows, m.rows());
        assertEquals(cols, m.cols());
        float[] expanded = new float[rows * cols];
        GgmlDequant.row(type, g.data(g.tensor("m")), 0, rows * cols, expanded, 0);
        float[][] batch = new float[3][rows];
        m.times(x, 3).rows(batch, 0, 0, rows);
        double tolerance = type == GgmlType.F32 ? 1e-4 : type == GgmlType.F16 ? 0.05 : 0.6;
        for (int b = 0; b < 3; b++) {
            float[][] one = new float[1][rows + 2];
            WeightMatrix.Product p = m.times(new float[][] {x[b]}, 1);
            p.rows(one, 2, 0, 4); // a split of the rows, written at an offset
            p.rows(one, 2, 4, rows);
            for (int r = 0; r < rows; r++) {
                double exact = 0;
                for (int c = 0; c < cols; c++) {
                    exact += (double) expanded[r * cols + c] * x[b][c];
                }
                assertEquals(exact, batch[b][r], tolerance, type + " row " + r + " of vector " + b);
                assertEquals(batch[b][r], one[0][2 + r], type + ": one vector gives the batch's bits");
            }
        }
        float[] row = new float[cols];
        m.row(3, row);
        float[] third = new float[cols];
        System.arraycopy(expanded, 3 * cols, third, 0, cols);
        assertArrayEquals(third, row, type + " row 3");
    }

    @ParameterizedTest
    @EnumSource(names = {"Q4_K", "Q6_K"})
    void kQuantRowsMustFillSuperBlocks(GgmlType type) {
        assertThrows(GgufFormatException.class, () -> new GgmlMatrix(type, java.nio.ByteBuffer.allocate(4096), 2, 288));
    }
}
