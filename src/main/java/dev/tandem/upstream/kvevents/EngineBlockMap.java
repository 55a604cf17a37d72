package dev.tandem.upstream.kvevents;

import dev.tandem.protocol.BlockHashes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A GPU engine's cached blocks as Tandem block hashes. Engine hashes are opaque and engine blocks may be
 * of another size than Tandem's ({@code worker.kv-block-size}): vLLM 16, SGLang 1 or 64 tokens. Each
 * engine block stored is mapped from its parent's position in the prompt: the Tandem blocks its tokens
 * complete ({@link BlockHashes#chain}, over the model's fingerprint, as routers hash prompts), and the
 * tokens left over for the next. A removal takes back the Tandem blocks completed at that engine block,
 * and — when its last tokens begin a Tandem block its descendants complete — that block too: without
 * the engine block, the engine cannot reuse any of it.
 *
 * <p>Blocks stored under more than their tokens (LoRA, multimodal inputs, cache salt) and their
 * descendants map to nothing: a plain prompt never hits them. So do blocks whose parent is unknown (the
 * stream began, or was cleared, after it): knowing too little is safe, a block held elsewhere is not.
 * Not thread-safe: one owner's context.
 */
public final class EngineBlockMap {
    /** Changes in Tandem blocks, per tier, for the owner to publish. */
    public interface Sink {
        void store(long[] hashes, boolean lowerTier);

        void remove(long[] hashes, boolean lowerTier);

        void clear();
    }

    /** One engine block: where its prompt stands after it, and what it completed. */
    private static final class Node {
        final long tandemParent;
        final int[] tail;
        final long[] completed;
        final boolean unmatched;
        final List<Long> children = new ArrayList<>(1);
        boolean first;
        boolean lower;

        Node(long tandemParent, int[] tail, long[] completed, boolean unmatched) {
            this.tandemParent = tandemParent;
            this.tail = tail;
            this.completed = completed;
            this.unmatched = unmatched;
        }
    }

    private static final Node ROOT = new Node(BlockHashes.ROOT, new int[0], new long[0], false);
    private static final Node UNMATCHED = new Node(BlockHashes.ROOT, new int[0], new long[0], true);

    private final long fingerprint;
    private final int blockSize;
    private final int maxBlocks;
    private final Map<Long, Node> nodes = new HashMap<>();
    private long unmapped;

    /**
     * @param fingerprint the model's fingerprint, as routers hash its prompts
     * @param blockSize   Tandem's block size for the model
     * @param maxBlocks   the most engine blocks remembered; past it everything is dropped (a clear)
     */
    public EngineBlockMap(long fingerprint, int blockSize, int maxBlocks) {
        this.fingerprint = fingerprint;
        this.blockSize = blockSize;
        this.maxBlocks = maxBlocks;
    }

    public void apply(EngineKvEvent event, Sink sink) {
        if (event instanceof EngineKvEvent.Stored s) {
            stored(s, sink);
        } else if (event instanceof EngineKvEvent.Removed r) {
            removed(r, sink);
        } else {
            clear(sink);
        }
    }

    /** Forgets everything, and tells the sink to. */
    public void clear(Sink sink) {
        nodes.clear();
        sink.clear();
    }

    /** Engine blocks remembered. */
    public int size() {
        return nodes.size();
    }

    /** Engine blocks stored whose parent was unknown, so no Tandem hash could be given to them. */
    public long unmapped() {
        return unmapped;
    }

    private void stored(EngineKvEvent.Stored s, Sink sink) {
        Node parent = s.hasParent() ? nodes.getOrDefault(s.parent(), UNMATCHED) : ROOT;
        Long parentKey = s.hasParent() ? s.parent() : null;
        for (int b = 0; b < s.hashes().length; b++) {
            long key = s.hashes()[b];
            Node node = nodes.get(key);
            if (node == null) {
                if (nodes.size() >= maxBlocks) {
                    clear(sink);
                    return;
                }
                node = map(parent, s, b);
                nodes.put(key, node);
                if (parentKey != null && nodes.get(parentKey) == parent && !parent.children.contains(key)) {
                    parent.children.add(key);
                }
                if (node.unmatched && parent == UNMATCHED) {
                    unmapped++;
                }
            }
            if (!(s.lowerTier() ? node.lower : node.first)) {
                if (s.lowerTier()) {
                    node.lower = true;
                } else {
                    node.first = true;
                }
                sink.store(node.completed, s.lowerTier());
                if (node.tail.length > 0) {
                    // Back: a descendant still held completes a block this one's tokens begin.
                    forSpill(node, s.lowerTier(), h -> sink.store(new long[] {h}, s.lowerTier()));
                }
            }
            parent = node;
            parentKey = key;
        }
    }

    /** Where the prompt stands after block {@code b} of the event, from where it stood after {@code parent}. */
    private Node map(Node parent, EngineKvEvent.Stored s, int b) {
        if (parent.unmatched || s.keyed()[b]) {
            return new Node(BlockHashes.ROOT, new int[0], new long[0], true);
        }
        int[] tokens = new int[parent.tail.length + s.blockSize()];
        System.arraycopy(parent.tail, 0, tokens, 0, parent.tail.length);
        System.arraycopy(s.tokens(), b * s.blockSize(), tokens, parent.tail.length, s.blockSize());
        int whole = tokens.length / blockSize;
        long[] completed = new long[whole];
        long previous = parent.tandemParent;
        for (int i = 0; i < whole; i++) {
            previous = BlockHashes.chain(fingerprint, previous, tokens, i * blockSize, (i + 1) * blockSize);
            completed[i] = previous;
        }
        return new Node(previous, Arrays.copyOfRange(tokens, whole * blockSize, tokens.length), completed, false);
    }

    private void removed(EngineKvEvent.Removed r, Sink sink) {
        boolean lowerTier = r.lowerTier();
        for (long key : r.hashes()) {
            Node node = nodes.get(key);
            if (node == null || !(lowerTier ? node.lower : node.first)) {
                continue;
            }
            if (lowerTier) {
                node.lower = false;
            } else {
                node.first = false;
            }
            sink.remove(node.completed, lowerTier);
            if (node.tail.length > 0) {
                forSpill(node, lowerTier, h -> sink.remove(new long[] {h}, lowerTier));
            }
            if (!node.first && !node.lower) {
                // Its children keep their own positions; a later store of this hash maps it again.
                nodes.remove(key);
            }
        }
    }

    /**
     * For each path below {@code node}: the first Tandem block a descendant held in that tier completes —
     * the one {@code node}'s last tokens begin.
     */
    private void forSpill(Node node, boolean lowerTier, java.util.function.LongConsumer action) {
        for (Long childKey : node.children) {
            Node child = nodes.get(childKey);
            if (child == null || child.unmatched) {
                continue;
            }
            if (child.completed.length > 0) {
                if (lowerTier ? child.lower : child.first) {
                    action.accept(child.completed[0]);
                }
            } else {
                forSpill(child, lowerTier, action);
            }
        }
    }
}
