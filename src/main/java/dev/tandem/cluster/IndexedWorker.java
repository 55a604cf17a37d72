package dev.tandem.cluster;

import dev.tandem.protocol.KvCacheEvents;
import java.util.TreeMap;

/** What the {@link PrefixIndex} knows of one worker. Confined to the index's context. */
final class IndexedWorker {
    /** A batch of the worker's events and when it arrived (wall clock). */
    record Received(KvCacheEvents events, long receivedMillis) {}

    final String id;
    LongHashSet blocks = new LongHashSet();
    /** Blocks in the cache's lower tier (offloaded from a GPU engine's memory), counted at a fraction. */
    LongHashSet lower = new LongHashSet();
    /** The last batch applied (or the snapshot's seq); 0: before the first. */
    long last;
    /** The snapshot request in flight, or null: while set, batches wait in {@link #held}. */
    Object syncing;
    /** Snapshots asked for in a row because the one before left a gap before the batches held. */
    int retries;

    final TreeMap<Long, Received> held = new TreeMap<>();

    IndexedWorker(String id) {
        this.id = id;
    }

    /** Whether either tier holds the block. */
    boolean holds(long block) {
        return blocks.contains(block) || lower.contains(block);
    }

    /**
     * The run of leading blocks the worker holds, a block held only in its lower tier counting
     * {@code lowerTierHit} (rounded down: what a scorer sees is whole blocks).
     */
    int leading(long[] hashes, double lowerTierHit) {
        int first = 0;
        int inLower = 0;
        for (long h : hashes) {
            if (blocks.contains(h)) {
                first++;
            } else if (lower.contains(h)) {
                inLower++;
            } else {
                break;
            }
        }
        return first + (int) (inLower * lowerTierHit);
    }
}
