package dev.tandem.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * The K/V of one sequence, in fixed-size blocks of tokens. A block is one float array laid out as
 * [layer][K=0 | V=1][slot][kvDim], so a block can be shipped or freed as a unit.
 *
 * <p>Not thread-safe: one sequence is computed by one thread at a time.
 */
public final class KvCache {
    private final KvLayout layout;
    private final List<float[]> blocks = new ArrayList<>();
    private int length;

    public KvCache(KvLayout layout) {
        this.layout = layout;
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
            blocks.add(new float[layout.blockFloats()]);
        }
    }

    /** Appends a block received from elsewhere (KV transfer); it must have the layout's size. */
    public void addBlock(float[] block) {
        if (block.length != layout.blockFloats()) {
            throw new IllegalArgumentException(
                    "block has " + block.length + " floats, layout needs " + layout.blockFloats());
        }
        blocks.add(block);
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
        return blocks.get(pos / layout.blockSize());
    }

    /** Drops every block; the cache is empty afterwards. */
    public void free() {
        blocks.clear();
        length = 0;
    }
}
