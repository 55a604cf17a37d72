package dev.tandem.router.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A router's record of what it routed to each worker (SGLang's approximate trees, over chained block
 * hashes): leading-block matches, sizes, the per-worker LRU bound that evicts leaves first, and a
 * departed worker's tree. Hashes here are small numbers standing for chained block hashes: a prompt
 * {1, 2, 3} and a prompt {1, 2, 4} share their first two blocks.
 */
class RoutedPrefixTreesTest {

    @Test
    void matchesTheLeadingBlocksRoutedToEachWorker() {
        RoutedPrefixTrees trees = new RoutedPrefixTrees(100);
        trees.insert("p1", new long[] {1, 2, 3});
        trees.insert("p2", new long[] {1, 5});
        trees.insert("p3", new long[] {9});

        assertEquals(Map.of("p1", 3, "p2", 1), trees.leadingBlocks(new long[] {1, 2, 3, 7}));
        assertEquals(Map.of("p1", 2, "p2", 1), trees.leadingBlocks(new long[] {1, 2, 4}));
        // A prompt whose first block was never routed matches nothing, whatever follows; nor does an empty one.
        assertEquals(Map.of(), trees.leadingBlocks(new long[] {8, 1, 2}));
        assertEquals(Map.of(), trees.leadingBlocks(new long[0]));
        assertEquals(Map.of("p1", 3L, "p2", 2L, "p3", 1L), trees.sizes());
    }

    @Test
    void sharedBlocksAreCountedOnce() {
        RoutedPrefixTrees trees = new RoutedPrefixTrees(100);
        trees.insert("p1", new long[] {1, 2, 3});
        trees.insert("p1", new long[] {1, 2, 3});
        trees.insert("p1", new long[] {1, 2, 4});
        assertEquals(4, trees.size("p1"));
        assertEquals(0, trees.size("p2"));
    }

    @Test
    void theBoundEvictsTheLeastRecentlyRoutedLeavesFirst() {
        RoutedPrefixTrees trees = new RoutedPrefixTrees(4);
        trees.insert("p1", new long[] {1, 2, 3}); // a path 1 → 2 → 3
        trees.insert("p1", new long[] {7, 8}); // 5 blocks: 3, the oldest leaf, goes; not its parents
        assertEquals(4, trees.size("p1"));
        assertEquals(Map.of("p1", 2), trees.leadingBlocks(new long[] {1, 2, 3}));
        assertEquals(Map.of("p1", 2), trees.leadingBlocks(new long[] {7, 8}));

        trees.insert("p1", new long[] {1, 2}); // routed again: 1 → 2 is now the more recent path
        trees.insert("p1", new long[] {5}); // one over: 8, the leaf of the older path 7 → 8, goes
        assertEquals(Map.of("p1", 2), trees.leadingBlocks(new long[] {1, 2}));
        assertEquals(Map.of("p1", 1), trees.leadingBlocks(new long[] {7, 8}));
        assertEquals(4, trees.size("p1"));
    }

    @Test
    void aPromptLongerThanTheBoundKeepsItsLeadingBlocks() {
        RoutedPrefixTrees trees = new RoutedPrefixTrees(3);
        trees.insert("p1", new long[] {1, 2, 3, 4, 5});
        assertEquals(Map.of("p1", 3), trees.leadingBlocks(new long[] {1, 2, 3, 4, 5}));
        assertEquals(3, trees.size("p1"));
    }

    @Test
    void lookingDoesNotCountAsRouting() {
        RoutedPrefixTrees trees = new RoutedPrefixTrees(2);
        trees.insert("p1", new long[] {1});
        trees.insert("p1", new long[] {2});
        trees.leadingBlocks(new long[] {1}); // not an access: 1 stays the eldest
        trees.insert("p1", new long[] {3});
        assertEquals(Map.of(), trees.leadingBlocks(new long[] {1}));
        assertEquals(Map.of("p1", 1), trees.leadingBlocks(new long[] {2}));
    }

    @Test
    void eachWorkerIsBoundedAlone() {
        RoutedPrefixTrees trees = new RoutedPrefixTrees(2);
        trees.insert("p1", new long[] {1, 2});
        trees.insert("p2", new long[] {1, 2});
        trees.insert("p2", new long[] {9});
        assertEquals(Map.of("p1", 2, "p2", 1), trees.leadingBlocks(new long[] {1, 2}));
        assertEquals(Map.of("p1", 2L, "p2", 2L), trees.sizes());
    }

    @Test
    void aWorkerThatLeavesLeavesItsTree() {
        RoutedPrefixTrees trees = new RoutedPrefixTrees(100);
        trees.insert("p1", new long[] {1, 2});
        trees.insert("p2", new long[] {1});
        trees.forgetWorker("p1");
        trees.forgetWorker("p9"); // never routed to: nothing to forget
        assertEquals(Map.of("p2", 1), trees.leadingBlocks(new long[] {1, 2}));
        assertEquals(Map.of("p2", 1L), trees.sizes());
        assertEquals(1, trees.workers());
    }

    @Test
    void treesSharingAnAllowanceStayWithinItTheLargestGivingWay() {
        RoutedPrefixTrees.Allowance allowance = new RoutedPrefixTrees.Allowance(7);
        RoutedPrefixTrees prefill = new RoutedPrefixTrees(100, allowance);
        RoutedPrefixTrees decode = new RoutedPrefixTrees(100, allowance);
        prefill.insert("p1", new long[] {1, 2, 3, 10});
        prefill.insert("p2", new long[] {7});
        decode.insert("d1", new long[] {4, 5});
        assertEquals(7, allowance.held());
        decode.insert("d1", new long[] {4, 6}); // one over: the growing trees' largest, d1, gives up its eldest
        assertEquals(7, allowance.held());
        assertEquals(Map.of("d1", 2), decode.leadingBlocks(new long[] {4, 6}));
        assertEquals(Map.of("d1", 1), decode.leadingBlocks(new long[] {4, 5}));
        prefill.insert("p2", new long[] {7, 8, 9}); // two over: p1, the largest, loses its two least recent
        assertEquals(7, allowance.held());
        assertEquals(Map.of("p2", 3), prefill.leadingBlocks(new long[] {7, 8, 9}));
        assertEquals(Map.of("p1", 2), prefill.leadingBlocks(new long[] {1, 2, 3, 10}));
        prefill.clear(); // its model left: its blocks go back
        assertEquals(2, allowance.held());
        assertEquals(0, prefill.workers());
    }

    @Test
    void aTreeHoldsAtLeastOneBlock() {
        assertThrows(IllegalArgumentException.class, () -> new RoutedPrefixTrees(0));
    }
}
