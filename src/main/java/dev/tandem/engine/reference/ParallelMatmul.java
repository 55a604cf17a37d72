package dev.tandem.engine.reference;

import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;

/**
 * A {@link WeightMatrix}'s products split by output
 * rows over a few threads. Decode is bound by reading the weights, and one core cannot draw all of a
 * machine's memory bandwidth: each thread streams its own rows of every column. Every output is
 * computed by exactly the operations of the single-threaded form, so results stay bit-identical.
 * Products too small to gain from a hand-off (the built-in model's) run on the caller's thread.
 */
final class ParallelMatmul {
    /** Multiply-adds below which a product stays on one thread (a hand-off costs a few microseconds). */
    static final long MIN_PARALLEL_WORK = 1L << 18;

    /** Multiply-adds from which a product is split over {@link SpinningPartners} (no wake-up to pay). */
    static final long MIN_PARTNER_WORK = 1L << 16;

    /** Multiply-adds a piece of a partner-split product aims at (~10 µs): enough pieces to balance. */
    static final long PIECE_WORK = 1L << 15;

    private final ForkJoinPool pool;
    private final SpinningPartners partners;
    private final int threads;

    /** @param threads how many threads one product may use, the caller's included (1: never split) */
    ParallelMatmul(int threads) {
        this.threads = Math.max(1, threads);
        this.pool = this.threads > 1 ? SharedPool.POOL : null;
        this.partners = this.threads > 1 ? SharedPool.PARTNERS : null;
    }

    /** Decode threads shared by every engine of the JVM: workers of one node take turns on them. */
    private static final class SharedPool {
        static final ForkJoinPool POOL = new ForkJoinPool(
                Runtime.getRuntime().availableProcessors(),
                p -> {
                    var t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(p);
                    t.setName("tandem-matmul-" + t.getPoolIndex());
                    t.setDaemon(true);
                    return t;
                },
                null,
                false);

        /** Up to three partners: a few cores draw most of a socket's bandwidth, and partners spin. */
        static final SpinningPartners PARTNERS = new SpinningPartners(
                Math.min(Runtime.getRuntime().availableProcessors(), 4) - 1, "tandem-matmul-partner");
    }

    /** out[b][r] = row r of {@code m} · x[b] for every row and each of the {@code batch} vectors. */
    void matmul(float[][] out, float[][] x, WeightMatrix m, int batch) {
        int d = m.rows();
        int n = m.cols();
        int blockCount = (d + TransformerMath.BLOCK_ROWS - 1) / TransformerMath.BLOCK_ROWS;
        long work = (long) n * d * batch;
        if (pool == null || work < MIN_PARTNER_WORK) {
            m.times(x, batch).rows(out, 0, 0, d);
            return;
        }
        WeightMatrix.Product product = m.times(x, batch);
        if ((batch == 1 || blockCount >= 2) && byPartners(out, product, m.rowUnit(), n, d, batch)) {
            return;
        }
        if (work < MIN_PARALLEL_WORK) {
            product.rows(out, 0, 0, d);
            return;
        }
        if (blockCount < 2 && batch >= 2) {
            // One block of rows (every matrix of a small model but its classifier): a batch splits by
            // sequence instead. Each thread reads the whole matrix — small enough to stay in cache — and
            // computes its sequences exactly as the whole batch would.
            forRanges(
                    batch,
                    (b0, b1) -> m.times(Arrays.copyOfRange(x, b0, b1), b1 - b0)
                            .rows(Arrays.copyOfRange(out, b0, b1), 0, 0, d));
            return;
        }
        int shares = Math.min(threads, blockCount);
        if (shares < 2) {
            product.rows(out, 0, 0, d);
            return;
        }
        // Shares of whole blocks.
        int step = (blockCount + shares - 1) / shares * TransformerMath.BLOCK_ROWS;
        ForkJoinTask<?>[] others = new ForkJoinTask<?>[shares - 1];
        int forked = 0;
        for (int r0 = step; r0 < d; r0 += step) {
            int from = r0;
            int to = Math.min(d, r0 + step);
            others[forked++] = pool.submit(() -> product.rows(out, 0, from, to));
        }
        product.rows(out, 0, 0, Math.min(step, d));
        for (int i = 0; i < forked; i++) {
            others[i].join();
        }
    }

    /** Rows split in pieces over the caller and the spinning partners; false if they are busy or it is one piece. */
    private boolean byPartners(float[][] out, WeightMatrix.Product product, int unit, int n, int d, int batch) {
        long unitWork = (long) unit * n * batch;
        int rows = (int) Math.max(1, (PIECE_WORK + unitWork - 1) / unitWork) * unit;
        int pieces = (d + rows - 1) / rows;
        return pieces >= 2 && partners.run(pieces, i -> product.rows(out, 0, i * rows, Math.min(d, i * rows + rows)));
    }

    /** What runs on a range {@code [from, to)} of a batch's sequences. */
    interface RangeTask {
        void run(int from, int to);
    }

    /**
     * Runs {@code task} over {@code [0, n)} split into one contiguous range per thread (the caller takes the
     * first); on one thread, or for n &lt; 2, as one range on the caller's thread.
     */
    void forRanges(int n, RangeTask task) {
        int shares = Math.min(threads, n);
        if (pool == null || shares < 2) {
            task.run(0, n);
            return;
        }
        int step = (n + shares - 1) / shares;
        ForkJoinTask<?>[] others = new ForkJoinTask<?>[shares - 1];
        int forked = 0;
        for (int from = step; from < n; from += step) {
            int f = from;
            int t = Math.min(n, from + step);
            others[forked++] = pool.submit(() -> task.run(f, t));
        }
        task.run(0, Math.min(step, n));
        for (int i = 0; i < forked; i++) {
            others[i].join();
        }
    }

    /** Threads one product may use, the caller's included. */
    int threads() {
        return threads;
    }
}
