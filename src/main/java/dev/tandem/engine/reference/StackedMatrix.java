package dev.tandem.engine.reference;

import java.util.List;

/**
 * Matrices of the same row length stacked into one: q, k and v (or gate and up) become one product,
 * one hand-off to the threads, with each part's rows after the previous part's. The parts keep their
 * own storage and types (a Q4_K_M file mixes Q4_K and Q6_K within a layer).
 */
public final class StackedMatrix implements WeightMatrix {
    private final WeightMatrix[] parts;
    private final int[] starts;
    private final int rows;
    private final int cols;
    private final int rowUnit;

    public StackedMatrix(List<? extends WeightMatrix> parts) {
        this.parts = parts.toArray(new WeightMatrix[0]);
        this.starts = new int[this.parts.length];
        int r = 0;
        int unit = 1;
        for (int i = 0; i < this.parts.length; i++) {
            if (this.parts[i].cols() != this.parts[0].cols()) {
                throw new IllegalArgumentException("stacked matrices must have rows of one length");
            }
            starts[i] = r;
            r += this.parts[i].rows();
            unit = Math.max(unit, this.parts[i].rowUnit());
        }
        this.rows = r;
        this.cols = this.parts[0].cols();
        this.rowUnit = unit;
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
        return rowUnit;
    }

    @Override
    public Product times(float[][] x, int batch) {
        Product[] products = new Product[parts.length];
        for (int i = 0; i < parts.length; i++) {
            products[i] = parts[i].times(x, batch);
        }
        return (out, at, r0, r1) -> {
            for (int i = 0; i < parts.length; i++) {
                int from = Math.max(r0, starts[i]);
                int to = Math.min(r1, starts[i] + parts[i].rows());
                if (from < to) {
                    products[i].rows(out, at + starts[i], from - starts[i], to - starts[i]);
                }
            }
        };
    }
}
