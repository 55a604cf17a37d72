package dev.tandem.engine.reference;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;

/**
 * {@link TransformerMath#matmulBlocks} split by output rows over a few threads. Decode is bound by
 * reading the weights, and one core cannot draw all of a machine's memory bandwidth: each thread
 * streams its own rows of every column. Every output is computed by exactly the operations of the
 * single-threaded form, so results stay bit-identical. Products too small to gain from a hand-off
 * (the built-in model's) run on the caller's thread.
 */
final class ParallelMatmul {
    /** Multiply-adds below which a product stays on one thread (a hand-off costs a few microseconds). */
    static final long MIN_PARALLEL_WORK = 1L << 18;

    private final ForkJoinPool pool;
    private final int threads;

    /** @param threads how many threads one product may use, the caller's included (1: never split) */
    ParallelMatmul(int threads) {
        this.threads = Math.max(1, threads);
        this.pool = this.threads > 1 ? SharedPool.POOL : null;
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
    }

    void matmulBlocks(float[][] out, float[][] x, float[][][] blocks, int n, int d, int batch) {
        int blockCount = (d + TransformerMath.BLOCK_ROWS - 1) / TransformerMath.BLOCK_ROWS;
        int shares = Math.min(threads, blockCount);
        if (pool == null || shares < 2 || (long) n * d * batch < MIN_PARALLEL_WORK) {
            TransformerMath.matmulBlocks(out, x, blocks, n, 0, d, batch);
            return;
        }
        // Shares of whole blocks.
        int step = (blockCount + shares - 1) / shares * TransformerMath.BLOCK_ROWS;
        ForkJoinTask<?>[] others = new ForkJoinTask<?>[shares - 1];
        int forked = 0;
        for (int r0 = step; r0 < d; r0 += step) {
            int from = r0;
            int to = Math.min(d, r0 + step);
            others[forked++] = pool.submit(() -> TransformerMath.matmulBlocks(out, x, blocks, n, from, to, batch));
        }
        TransformerMath.matmulBlocks(out, x, blocks, n, 0, Math.min(step, d), batch);
        for (int i = 0; i < forked; i++) {
            others[i].join();
        }
    }
}
