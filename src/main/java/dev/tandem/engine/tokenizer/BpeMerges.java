package dev.tandem.engine.tokenizer;

import java.util.Arrays;

/**
 * A BPE model's merge table and the merging itself, as Hugging Face's BPE does it: of the adjacent
 * pairs of a word's symbols, the pair whose merge ranks first is merged (leftmost on a tie), until no
 * adjacent pair has a merge. The table is open addressing over packed id pairs, so 280k merges cost
 * about 6 MB and no boxed objects.
 */
final class BpeMerges {
    private static final long EMPTY = -1L;

    private final long[] keys; // left id << 32 | right id
    private final int[] ranks;
    private final int[] results; // per rank: the merged token's id
    private final int mask;

    /** {@code left[r]}, {@code right[r]} merge into {@code merged[r]} with rank r; pairs seen again keep their first rank. */
    BpeMerges(int[] left, int[] right, int[] merged) {
        int capacity = Integer.highestOneBit(Math.max(4, left.length * 2 - 1)) << 1;
        keys = new long[capacity];
        ranks = new int[capacity];
        Arrays.fill(keys, EMPTY);
        mask = capacity - 1;
        results = merged.clone();
        for (int r = 0; r < left.length; r++) {
            long key = key(left[r], right[r]);
            int slot = slot(key);
            if (keys[slot] == EMPTY) {
                keys[slot] = key;
                ranks[slot] = r;
            }
        }
    }

    /** The merges as (left, right) id pairs in rank order, each {@code left << 32 | right}; -1 for a rank whose pair ranked earlier. */
    long[] pairsByRank() {
        long[] pairs = new long[results.length];
        Arrays.fill(pairs, EMPTY);
        for (int slot = 0; slot < keys.length; slot++) {
            if (keys[slot] != EMPTY) {
                pairs[ranks[slot]] = keys[slot];
            }
        }
        return pairs;
    }

    int size() {
        return results.length;
    }

    long footprintBytes() {
        return 16L * 3 + 8L * keys.length + 4L * ranks.length + 4L * results.length;
    }

    /** The rank of merging {@code left} then {@code right}, or -1. */
    int rank(int left, int right) {
        long key = key(left, right);
        int slot = slot(key);
        return keys[slot] == key ? ranks[slot] : -1;
    }

    /**
     * Merges {@code symbols[0, n)} in place and returns how many remain. A heap of (rank, position)
     * candidates keeps a long word (SentencePiece-style models merge a whole text) at n log n.
     */
    int merge(int[] symbols, int n) {
        if (n < 2) {
            return n;
        }
        int[] next = new int[n];
        int[] prev = new int[n];
        for (int i = 0; i < n; i++) {
            next[i] = i + 1 < n ? i + 1 : -1;
            prev[i] = i - 1;
        }
        long[] heap = new long[n];
        int size = 0;
        for (int i = 0; i + 1 < n; i++) {
            int r = rank(symbols[i], symbols[i + 1]);
            if (r >= 0) {
                size = push(heap, size, candidate(r, i));
            }
        }
        boolean[] gone = new boolean[n];
        while (size > 0) {
            long top = heap[0];
            size = pop(heap, size);
            int pos = (int) top;
            int r = (int) (top >>> 32);
            int right = next[pos];
            if (gone[pos] || right < 0 || rank(symbols[pos], symbols[right]) != r) {
                continue; // a stale candidate: one of its symbols was merged since
            }
            symbols[pos] = results[r];
            gone[right] = true;
            next[pos] = next[right];
            if (next[pos] >= 0) {
                prev[next[pos]] = pos;
            }
            heap = grow(heap, size + 2);
            if (prev[pos] >= 0 && rank(symbols[prev[pos]], symbols[pos]) >= 0) {
                size = push(heap, size, candidate(rank(symbols[prev[pos]], symbols[pos]), prev[pos]));
            }
            if (next[pos] >= 0 && rank(symbols[pos], symbols[next[pos]]) >= 0) {
                size = push(heap, size, candidate(rank(symbols[pos], symbols[next[pos]]), pos));
            }
        }
        int out = 0;
        for (int i = 0; i >= 0; i = next[i]) {
            symbols[out++] = symbols[i];
        }
        return out;
    }

    private static long candidate(int rank, int pos) {
        return (long) rank << 32 | pos;
    }

    private static long[] grow(long[] heap, int needed) {
        return needed <= heap.length ? heap : Arrays.copyOf(heap, Math.max(needed, heap.length * 2));
    }

    private static int push(long[] heap, int size, long value) {
        int i = size;
        heap[i] = value;
        while (i > 0 && heap[(i - 1) / 2] > heap[i]) {
            long t = heap[i];
            heap[i] = heap[(i - 1) / 2];
            heap[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
        return size + 1;
    }

    private static int pop(long[] heap, int size) {
        heap[0] = heap[--size];
        int i = 0;
        while (true) {
            int smallest = i;
            int l = 2 * i + 1;
            if (l < size && heap[l] < heap[smallest]) {
                smallest = l;
            }
            if (l + 1 < size && heap[l + 1] < heap[smallest]) {
                smallest = l + 1;
            }
            if (smallest == i) {
                return size;
            }
            long t = heap[i];
            heap[i] = heap[smallest];
            heap[smallest] = t;
            i = smallest;
        }
    }

    private static long key(int left, int right) {
        return (long) left << 32 | (right & 0xFFFFFFFFL);
    }

    private int slot(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        int slot = (int) (h ^ (h >>> 32)) & mask;
        while (keys[slot] != EMPTY && keys[slot] != key) {
            slot = (slot + 1) & mask;
        }
        return slot;
    }
}
