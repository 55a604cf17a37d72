package dev.tandem.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * The K/V of one sequence, in fixed-size blocks of tokens. A block is one float array laid out as
 * [layer][K=0 | V=1][slot][kvDim], so a block can be shipped or freed as a unit.
 *
 * <p>The cache holds one reference to each of its {@link KvBlock}s: blocks it grew come from its pool (or
 * are new arrays without one), blocks it was given are references the giver handed over; {@link #free()}
 * lets go of all of them.
 *
 * <p>Not thread-safe: one sequence is computed by one thread at a time.
 */
public final class KvCache {
    private final KvLayout layout;
    private final KvBlockPool pool;
    private final List<KvBlock> blocks = new ArrayList<>();
    private int length;

    /** A cache whose blocks are new arrays, left to the collector when freed. */
    public KvCache(KvLayout layout) {
        this(layout, null);
    }

    /** A cache whose blocks come from {@code pool} (null: new arrays) and go back to it when freed. */
    public KvCache(KvLayout layout, KvBlockPool pool) {
        this.layout = layout;
        this.pool = pool;
    }

    public KvLayout layout() {
        return layout;
    }

    /** Number of positions whose K/V is stored. */
    public int length() {
        return length;
    }

    public int blockCount() {
        return blocks.size();
    }

    public float[] block(int index) {
        return blocks.get(index).data();
    }

    /** The block itself, for a holder that keeps it beyond this cache (it retains its own reference). */
    public KvBlock kvBlock(int index) {
        return blocks.get(index);
    }

    /** Bytes of KV memory this cache holds (whole blocks). */
    public long bytes() {
        return blocks.size() * layout.blockBytes();
    }

    /** Grows the block list so that {@code tokens} positions fit. */
    public void ensureCapacity(int tokens) {
        int needed = layout.blocksFor(tokens);
        while (blocks.size() < needed) {
            blocks.add(pool != null ? pool.take() : KvBlock.unpooled(new float[layout.blockFloats()]));
        }
    }

    /** Appends a block received from elsewhere (KV transfer); it must have the layout's size. */
    public void addBlock(float[] block) {
        addBlock(KvBlock.unpooled(block));
    }

    /**
     * Appends a block and takes over the caller's reference to it (a block the caller took, or one a prefix
     * cache retained for it).
     */
    public void addBlock(KvBlock block) {
        if (block.data().length != layout.blockFloats()) {
            throw new IllegalArgumentException(
                    "block has " + block.data().length + " floats, layout needs " + layout.blockFloats());
        }
        blocks.add(block);
    }

    /** Appends a block whose every float the caller is about to write (a received one), and returns its floats. */
    public float[] appendBlockToFill() {
        KvBlock b = pool != null ? pool.takeDirty() : KvBlock.unpooled(new float[layout.blockFloats()]);
        blocks.add(b);
        return b.data();
    }

    /** Marks positions [0, length) as filled; the blocks must already hold them. */
    public void setLength(int length) {
        if (length < 0 || layout.blocksFor(length) > blocks.size()) {
            throw new IllegalArgumentException("length " + length + " does not fit " + blocks.size() + " blocks");
        }
        this.length = length;
    }

    /** Offset of the K row (kv = 0) or V row (kv = 1) of {@code layer} at {@code pos} inside {@link #blockFor(int)}. */
    public int offset(int layer, int kv, int pos) {
        int slot = pos % layout.blockSize();
        return ((layer * 2 + kv) * layout.blockSize() + slot) * layout.kvDim();
    }

    public float[] blockFor(int pos) {
        return blocks.get(pos / layout.blockSize()).data();
    }

    /** Lets go of every block (the last holder gives it back to its pool); the cache is empty afterwards. */
    public void free() {
        for (KvBlock b : blocks) {
            b.release();
        }
        blocks.clear();
        length = 0;
    }
}
