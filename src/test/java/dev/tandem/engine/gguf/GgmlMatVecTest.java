package dev.tandem.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A matrix multiplied in its file type equals, bit for bit, the same sums over the matrix expanded to
 * floats first (which the multiplication never does); rows come from a GGUF file's mapped tensor.
 */
class GgmlMatVecTest {
    @TempDir
    Path dir;

    @Test
    void everyTypeMultipliesAsItsExpandedFloatsWould() throws IOException {
        int rows = 5;
        int cols = 512;
        Random random = new Random(3);
        float[] w = new float[rows * cols];
        float[] x = new float[cols];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) random.nextGaussian();
        }
        for (int i = 0; i < cols; i++) {
            x[i] = (float) random.nextGaussian();
        }
        for (GgmlType type : new GgmlType[] {GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q8_0, GgmlType.Q4_0}) {
            Path file = dir.resolve(type + ".gguf");
            new GgufWriter()
                    .tensor("m", new long[] {cols, rows}, type, GgmlQuantize.quantize(type, w))
                    .write(file);
            GgufFile g = GgufFile.open(file);
            GgmlMatVec m = GgmlMatVec.of(g, g.tensor("m"));
            assertEquals(rows, m.rows());
            assertEquals(cols, m.cols());
            float[] expanded = new float[rows * cols];
            GgmlDequant.row(type, g.data(g.tensor("m")), 0, rows * cols, expanded, 0);
            float[] expected = new float[rows];
            for (int r = 0; r < rows; r++) {
                float sum = 0;
                for (int c = 0; c < cols; c++) {
                    sum += expanded[r * cols + c] * x[c];
                }
                expected[r] = sum;
            }
            float[] out = new float[rows];
            m.multiply(x, out, 0, rows);
            assertArrayEquals(expected, out, type.name());
            float[] row = new float[cols];
            m.row(3, row);
            float[] third = new float[cols];
            System.arraycopy(expanded, 3 * cols, third, 0, cols);
            assertArrayEquals(third, row, type + " row 3");
        }
    }

    @Test
    void kQuantRowsAreReadInWholeSuperBlocks() {
        // Two rows of 256 Q6_K elements, all scales 1, d = 1: element j of a row is its 6-bit value - 32.
        ByteBuffer b = ByteBuffer.allocate(2 * 210).order(ByteOrder.LITTLE_ENDIAN);
        for (int r = 0; r < 2; r++) {
            for (int i = 0; i < 16; i++) {
                b.put(r * 210 + 192 + i, (byte) 1);
            }
            b.putShort(r * 210 + 208, (short) 0x3C00);
            b.put(r * 210, (byte) (r + 1)); // element 0: low nibble r + 1, high bits 0 -> r + 1 - 32
        }
        GgmlMatVec m = new GgmlMatVec(GgmlType.Q6_K, b, 2, 256);
        float[] x = new float[256];
        x[0] = 1;
        assertEquals(1 - 32, m.dot(0, x, GgmlMatVec.scratch()));
        assertEquals(2 - 32, m.dot(1, x, GgmlMatVec.scratch()));
    }

    @Test
    void aMatrixTheTensorCannotHoldIsRefused() {
        ByteBuffer b = ByteBuffer.allocate(34);
        assertThrows(GgufFormatException.class, () -> new GgmlMatVec(GgmlType.Q8_0, b, 2, 32));
        assertThrows(GgufFormatException.class, () -> new GgmlMatVec(GgmlType.Q8_0, b, 1, 48));
    }
}
