package dev.tandem.engine;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * One KV block's floats ({@link KvLayout#blockFloats()}) and how many holders share it: the sequences
 * whose caches hold it and the prefix cache that keeps it. The last holder to let go gives it back to its
 * {@link KvBlockPool}, which hands it out again — so a worker's KV churn (blocks evicted, sequences
 * ending) makes no garbage for the collector. A holder lost without {@link #release()} only loses the
 * block to the collector, as before pooling; releasing a reference one does not hold would hand a block in
 * use to someone else, so each holder releases exactly the references it took.
 */
public final class KvBlock {
    private static final AtomicIntegerFieldUpdater<KvBlock> REFS =
            AtomicIntegerFieldUpdater.newUpdater(KvBlock.class, "refs");

    private final float[] data;
    private final KvBlockPool pool;
    private volatile int refs;

    KvBlock(float[] data, KvBlockPool pool) {
        this.data = data;
        this.pool = pool;
        this.refs = 1;
    }

    /** A block no pool takes back (tests, engines run outside a worker): dropped when its holders are. */
    public static KvBlock unpooled(float[] data) {
        return new KvBlock(data, null);
    }

    public float[] data() {
        return data;
    }

    /** One more holder: the caller now owns a reference it must release. */
    public KvBlock retain() {
        int before = REFS.getAndIncrement(this);
        if (before <= 0) {
            REFS.getAndDecrement(this);
            throw new IllegalStateException("retained a KV block already given back to its pool");
        }
        return this;
    }

    /** Lets go of one reference; the last one gives the block back to its pool. */
    public void release() {
        int after = REFS.decrementAndGet(this);
        if (after == 0 && pool != null) {
            pool.recycle(this);
        } else if (after < 0) {
            throw new IllegalStateException("released a KV block more often than it was held");
        }
    }

    /** Handed out again by its pool: one holder. */
    void reuse() {
        refs = 1;
    }

    /** References held now (tests and metrics). */
    public int refs() {
        return refs;
    }
}
