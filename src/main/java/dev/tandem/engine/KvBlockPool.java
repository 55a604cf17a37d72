package dev.tandem.engine;

import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The KV blocks of one layout, handed out and taken back: a node's workers share one. Why: a worker's
 * prefix cache and kept blocks fill their share of the heap and then evict as fast as new KV arrives;
 * evicted blocks had lived long enough to reach G1's old generation, so every eviction was old garbage —
 * ~160 MB a minute in a soak at 60 requests/s, collected only by concurrent cycles that came every few
 * minutes, each taking a core for ~1.7 s, growing the heap by a gigabyte and stalling requests for
 * seconds. Recycled, the blocks stay put: the old generation holds the same arrays minute after minute.
 *
 * <p>Bounded: it keeps at most {@code maxBlocks} blocks alive, in use or idle; a block given back beyond
 * that is dropped. Taking never fails — the workers' capacities bound what is in use — but a block taken
 * while all are in use is a new one. Thread-safe.
 */
public final class KvBlockPool {
    private final int blockFloats;
    private final long maxBlocks;
    private final ConcurrentLinkedDeque<KvBlock> idle = new ConcurrentLinkedDeque<>();
    private final AtomicLong live = new AtomicLong();
    private final AtomicLong idleCount = new AtomicLong();
    private final AtomicLong allocated = new AtomicLong();
    private final AtomicLong reused = new AtomicLong();

    /** @param maxBlocks the most blocks kept alive, in use or idle (the node's KV budget in blocks) */
    public KvBlockPool(KvLayout layout, long maxBlocks) {
        this.blockFloats = layout.blockFloats();
        this.maxBlocks = maxBlocks;
    }

    /**
     * Allocates every block the bound allows, idle until taken: the KV memory is reserved before traffic
     * (as vLLM reserves its KV cache), so the heap does not grow with the first minutes' load. Returns the
     * blocks allocated.
     */
    public long fill() {
        long added = 0;
        while (live.get() < maxBlocks) {
            KvBlock b = allocate();
            b.release(); // back into the pool, idle
            added++;
        }
        return added;
    }

    /** A block of zeros, held once by the caller. */
    public KvBlock take() {
        KvBlock b = reuse();
        if (b == null) {
            return allocate();
        }
        Arrays.fill(b.data(), 0f);
        return b;
    }

    /** A block whose floats the caller overwrites entirely (a received one), held once by the caller. */
    public KvBlock takeDirty() {
        KvBlock b = reuse();
        return b != null ? b : allocate();
    }

    private KvBlock reuse() {
        KvBlock b = idle.pollFirst();
        if (b != null) {
            idleCount.decrementAndGet();
            reused.incrementAndGet();
            b.reuse();
        }
        return b;
    }

    private KvBlock allocate() {
        live.incrementAndGet();
        allocated.incrementAndGet();
        return new KvBlock(new float[blockFloats], this);
    }

    /** A block whose last holder let go. */
    void recycle(KvBlock b) {
        if (b.data().length != blockFloats || live.get() > maxBlocks) {
            live.decrementAndGet();
            return;
        }
        idle.addFirst(b);
        idleCount.incrementAndGet();
    }

    /** Blocks alive: in use and idle. */
    public long live() {
        return live.get();
    }

    /** Blocks idle, ready to be handed out again. */
    public long idle() {
        return idleCount.get();
    }

    /** Blocks allocated so far (each a new array for the collector to track). */
    public long allocated() {
        return allocated.get();
    }

    /** Blocks handed out again so far instead of allocated. */
    public long reused() {
        return reused.get();
    }
}
