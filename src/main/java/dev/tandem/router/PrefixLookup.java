package dev.tandem.router;

import java.util.Map;

/**
 * What the router knows of the workers' KV caches (the prefix index the cache events build): for a
 * prompt's block hashes, each worker holding at least the first block and how many blocks, from the
 * first, it holds.
 */
@FunctionalInterface
public interface PrefixLookup {
    Map<String, Integer> leadingBlocks(long[] blockHashes);

    /** Knows of no cache. */
    PrefixLookup NONE = hashes -> Map.of();
}
