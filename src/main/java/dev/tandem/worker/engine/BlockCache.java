package dev.tandem.worker.engine;

import dev.tandem.engine.KvBlock;
import dev.tandem.engine.KvLayout;
import dev.tandem.protocol.BlockHashes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A worker's reusable KV: full blocks of computed sequences, named by their chained hash
 * ({@link BlockHashes}) and kept as a tree of prefixes — a block is only ever held with every block
 * before it, so a lookup walks a prompt's hashes from the first and stops at the first missing one.
 * Bounded in bytes; eviction takes the least recently used block that no other block follows (LRU over
 * leaves, in logarithmic time), so prefixes shared by many sequences outlive their branches.
 *
 * <p>Blocks are shared, not copied: a block is full, so no sequence writes into it again, and a sequence
 * built on cached blocks writes only into blocks after them. The cache holds one reference to each block
 * it keeps ({@link KvBlock}), and a lookup hands the caller references of its own: an evicted block goes
 * back to its pool once the sequences that use it have let go too. Each block keeps its tokens, so a 64-bit
 * hash collision can never hand out another prefix's KV. What was stored and removed since the last
 * {@link #drainEvents} is recorded for the worker's cache events. Thread-safe: prefill threads and the
 * worker's event loop use it.
 */
final class BlockCache {

    /** A prefix hit: the cached blocks, in order, to start a sequence's KV with; the caller holds each once. */
    record Hit(List<KvBlock> blocks) {
        int tokens(int blockSize) {
            return blocks.size() * blockSize;
        }
    }

    /** Blocks stored and removed since the last drain, in that order of application. */
    record Events(long[] stored, long[] removed) {
        boolean isEmpty() {
            return stored.length == 0 && removed.length == 0;
        }
    }

    private static final class Node {
        final long hash;
        final Node parent;
        final int[] tokens;
        final KvBlock data;
        int children;
        /** When the node was last used; along a path a parent is always used just before its child. */
        long used;

        Node(long hash, Node parent, int[] tokens, KvBlock data) {
            this.hash = hash;
            this.parent = parent;
            this.tokens = tokens;
            this.data = data;
        }
    }

    private final KvLayout layout;
    private final long fingerprint;
    private long capacityBytes;
    private final Map<Long, Node> nodes = new HashMap<>();
    /**
     * The nodes no other node follows — the only ones eviction may take — by when each was last used. A
     * node whose last child is evicted rejoins with its own time, just before that child's, so a stale
     * chain is pruned to its root before a fresher branch loses a block.
     */
    private final TreeMap<Long, Node> leaves = new TreeMap<>();

    private long clock;

    /** Net changes since the last drain: a block stored and removed again in between is in neither. */
    private final LinkedHashSet<Long> stored = new LinkedHashSet<>();

    private final LinkedHashSet<Long> removed = new LinkedHashSet<>();
    private long evictions;

    BlockCache(KvLayout layout, long fingerprint, long capacityBytes) {
        this.layout = layout;
        this.fingerprint = fingerprint;
        this.capacityBytes = capacityBytes;
    }

    int blockSize() {
        return layout.blockSize();
    }

    /**
     * The longest run of {@code tokens}' leading full blocks held here, at most {@code maxBlocks}; the
     * blocks found count as used, and the caller holds a reference to each (retained here, under the lock,
     * so no eviction can give one back to its pool first).
     */
    synchronized Hit lookup(int[] tokens, int maxBlocks) {
        List<Node> path = held(tokens, maxBlocks);
        List<KvBlock> hit = new ArrayList<>(path.size());
        for (Node n : path) {
            hit.add(n.data.retain());
            touch(n);
        }
        return new Hit(hit);
    }

    /**
     * The tokens a {@link #lookup} would find now, at most {@code maxBlocks} blocks of them; nothing counts as
     * used and nothing is retained. What a queued prompt will compute is its length less this.
     */
    synchronized int cachedTokens(int[] tokens, int maxBlocks) {
        return held(tokens, maxBlocks).size() * layout.blockSize();
    }

    /** The held nodes of {@code tokens}' leading full blocks, in order, at most {@code maxBlocks}. */
    private List<Node> held(int[] tokens, int maxBlocks) {
        int bs = layout.blockSize();
        int limit = Math.min(maxBlocks, tokens.length / bs);
        List<Node> path = new ArrayList<>();
        long previous = BlockHashes.ROOT;
        for (int b = 0; b < limit; b++) {
            long hash = BlockHashes.chain(fingerprint, previous, tokens, b * bs, (b + 1) * bs);
            Node n = nodes.get(hash);
            if (n == null || !Arrays.equals(n.tokens, 0, bs, tokens, b * bs, (b + 1) * bs)) {
                break;
            }
            path.add(n);
            previous = hash;
        }
        return path;
    }

    /**
     * Keeps the full blocks of a sequence whose KV positions hold {@code tokens} (its {@code blocks}, in
     * order; a block is kept as it is, not copied, with a reference of the cache's own), then evicts down to
     * the capacity.
     */
    synchronized void store(int[] tokens, List<KvBlock> blocks) {
        int bs = layout.blockSize();
        int full = Math.min(tokens.length / bs, blocks.size());
        Node parent = null;
        long previous = BlockHashes.ROOT;
        for (int b = 0; b < full; b++) {
            long hash = BlockHashes.chain(fingerprint, previous, tokens, b * bs, (b + 1) * bs);
            Node n = nodes.get(hash);
            if (n == null) {
                n = new Node(
                        hash,
                        parent,
                        Arrays.copyOfRange(tokens, b * bs, (b + 1) * bs),
                        blocks.get(b).retain());
                nodes.put(hash, n);
                n.used = ++clock;
                leaves.put(n.used, n);
                if (!removed.remove(hash)) {
                    stored.add(hash);
                }
                if (parent != null && parent.children++ == 0) {
                    leaves.remove(parent.used);
                }
            } else if (!Arrays.equals(n.tokens, 0, bs, tokens, b * bs, (b + 1) * bs)) {
                break; // a hash collision: keep what is held, store nothing after it
            } else {
                touch(n);
            }
            parent = n;
            previous = hash;
        }
        evictTo(capacityBytes);
    }

    /** Evicts least recently used leaves until at most {@code bytes} are held; returns the bytes freed. */
    synchronized long evictTo(long bytes) {
        long freed = 0;
        while (bytes() > Math.max(0, bytes) && !leaves.isEmpty()) {
            Node victim = leaves.pollFirstEntry().getValue();
            nodes.remove(victim.hash);
            victim.data.release();
            if (victim.parent != null && --victim.parent.children == 0) {
                leaves.put(victim.parent.used, victim.parent);
            }
            if (!stored.remove(victim.hash)) {
                removed.add(victim.hash);
            }
            evictions++;
            freed += layout.blockBytes();
        }
        return freed;
    }

    private void touch(Node n) {
        boolean leaf = n.children == 0;
        if (leaf) {
            leaves.remove(n.used);
        }
        n.used = ++clock;
        if (leaf) {
            leaves.put(n.used, n);
        }
    }

    /** Changes the bound (a decode worker's room for finished sequences moves with its running ones). */
    synchronized void capacity(long bytes) {
        capacityBytes = bytes;
        evictTo(bytes);
    }

    synchronized long bytes() {
        return nodes.size() * layout.blockBytes();
    }

    synchronized int blocks() {
        return nodes.size();
    }

    synchronized long evictions() {
        return evictions;
    }

    /** What changed since the previous drain (stored before removed), and forgets it. */
    synchronized Events drainEvents() {
        Events e = new Events(toArray(stored), toArray(removed));
        stored.clear();
        removed.clear();
        return e;
    }

    /**
     * The events not yet drained and, atomically with them, every block held once they are applied: a
     * snapshot consistent with the batch that carries those events.
     */
    synchronized Map.Entry<Events, long[]> drainWithSnapshot() {
        Events e = drainEvents();
        long[] all = new long[nodes.size()];
        int i = 0;
        for (long h : nodes.keySet()) {
            all[i++] = h;
        }
        return Map.entry(e, all);
    }

    private static long[] toArray(Collection<Long> values) {
        return values.stream().mapToLong(Long::longValue).toArray();
    }

    /** For tests: the blocks held, by hash. */
    synchronized Map<Long, float[]> contents() {
        Map<Long, float[]> out = new HashMap<>();
        nodes.forEach((h, n) -> out.put(h, n.data.data()));
        return out;
    }
}
