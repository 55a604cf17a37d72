package dev.tandem.worker.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.KvBlock;
import dev.tandem.engine.KvBlockPool;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;
import dev.tandem.protocol.BlockHashes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class BlockCacheTest {

    private static final KvLayout LAYOUT = new KvLayout(1, 1, 2, 2); // 2 tokens a block, 32 bytes a block
    private static final long FP = 42;
    private static final long BLOCK = LAYOUT.blockBytes();

    /** Blocks whose data says which tokens they came from, so a hit can be told apart. */
    private static List<float[]> blocks(int[] tokens) {
        List<float[]> out = new ArrayList<>();
        for (int b = 0; b < tokens.length / LAYOUT.blockSize(); b++) {
            float[] data = new float[LAYOUT.blockFloats()];
            Arrays.fill(data, tokens[b * 2] * 100 + tokens[b * 2 + 1]);
            out.add(data);
        }
        return out;
    }

    private static BlockCache cache(int capacityBlocks) {
        return new BlockCache(LAYOUT, FP, capacityBlocks * BLOCK);
    }

    private static void store(BlockCache cache, int... tokens) {
        cache.store(tokens, blocks(tokens).stream().map(KvBlock::unpooled).toList());
    }

    private static int hitBlocks(BlockCache cache, int... tokens) {
        return cache.lookup(tokens, Integer.MAX_VALUE).blocks().size();
    }

    private static Set<Long> set(long[] values) {
        return LongStream.of(values).boxed().collect(Collectors.toSet());
    }

    @Test
    void anEvictedBlockASequenceStillUsesGoesBackToThePoolOnlyWhenTheSequenceEnds() {
        KvBlockPool pool = new KvBlockPool(LAYOUT, 100);
        BlockCache cache = cache(2);
        KvCache first = new KvCache(LAYOUT, pool);
        first.ensureCapacity(4);
        first.setLength(4);
        cache.store(new int[] {1, 2, 3, 4}, PromptPrefill.fullBlocks(first, 2));
        first.free(); // the cache's references keep both blocks
        assertEquals(0, pool.idle());

        KvCache sequence = new KvCache(LAYOUT, pool);
        cache.lookup(new int[] {1, 2, 3, 4}, 2).blocks().forEach(sequence::addBlock);
        cache.capacity(0); // both evicted while the sequence decodes on them
        assertEquals(0, cache.blocks());
        assertEquals(0, pool.idle(), "not handed out again under the sequence");
        sequence.free();
        assertEquals(2, pool.idle(), "the sequence was the last holder");
    }

    @Test
    void aLookupWalksTheLeadingBlocksAndStopsAtTheFirstMissing() {
        BlockCache cache = cache(100);
        store(cache, 1, 2, 3, 4, 5, 6, 7); // three full blocks; the odd token is never stored
        assertEquals(3, cache.blocks());

        BlockCache.Hit hit = cache.lookup(new int[] {1, 2, 3, 4, 9, 9, 5, 6}, Integer.MAX_VALUE);
        assertEquals(2, hit.blocks().size());
        assertEquals(304f, hit.blocks().get(1).data()[0]);
        assertEquals(4, hit.tokens(LAYOUT.blockSize()));
        assertEquals(0, hitBlocks(cache, 9, 9, 3, 4), "a block is only found after the blocks before it");
        assertEquals(1, cache.lookup(new int[] {1, 2, 3, 4, 5, 6}, 1).blocks().size());
    }

    @Test
    void cachedTokensCountsWhatALookupWouldFindAndLeavesRecencyAlone() {
        BlockCache cache = cache(4);
        store(cache, 1, 1, 2, 2); // older
        store(cache, 3, 3, 4, 4); // newer
        assertEquals(4, cache.cachedTokens(new int[] {1, 1, 2, 2, 9}, Integer.MAX_VALUE));
        assertEquals(2, cache.cachedTokens(new int[] {1, 1, 2, 2}, 1), "at most maxBlocks");
        assertEquals(0, cache.cachedTokens(new int[] {2, 2}, Integer.MAX_VALUE));

        store(cache, 5, 5); // a fifth block: the oldest leaf goes, the peek above did not make it fresh
        assertEquals(1, hitBlocks(cache, 1, 1, 2, 2));
        assertEquals(2, hitBlocks(cache, 3, 3, 4, 4));
    }

    @Test
    void evictionTakesTheLeastRecentlyUsedLeafSoASharedPrefixOutlivesItsBranches() {
        BlockCache cache = cache(4);
        store(cache, 1, 1, 2, 2, 3, 3); // the shared prefix, then branch A
        store(cache, 1, 1, 2, 2, 4, 4); // branch B
        assertEquals(4, cache.blocks());
        hitBlocks(cache, 1, 1, 2, 2, 3, 3); // A is now fresher than B

        store(cache, 1, 1, 5, 5); // a fifth block: the oldest leaf (B's tail) goes
        assertEquals(4, cache.blocks());
        assertEquals(1, cache.evictions());
        assertEquals(2, hitBlocks(cache, 1, 1, 2, 2, 4, 4));
        assertEquals(3, hitBlocks(cache, 1, 1, 2, 2, 3, 3));
        assertEquals(2, hitBlocks(cache, 1, 1, 5, 5));
    }

    @Test
    void aStaleChainIsPrunedToItsRootBeforeAFresherBranchLosesABlock() {
        BlockCache cache = cache(6);
        store(cache, 1, 1, 2, 2, 3, 3, 4, 4); // a stale four-block chain
        store(cache, 7, 7, 8, 8); // a fresh two-block chain
        hitBlocks(cache, 7, 7, 8, 8);

        store(cache, 9, 9, 9, 9, 9, 9); // three more blocks: three of the stale chain's must go
        assertEquals(1, hitBlocks(cache, 1, 1, 2, 2, 3, 3, 4, 4));
        assertEquals(2, hitBlocks(cache, 7, 7, 8, 8));
        assertEquals(3, hitBlocks(cache, 9, 9, 9, 9, 9, 9));
        assertEquals(3, cache.evictions());
    }

    @Test
    void theBoundHoldsAndShrinkingItEvicts() {
        BlockCache cache = cache(3);
        store(cache, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5);
        assertEquals(3, cache.blocks());
        assertEquals(3 * BLOCK, cache.bytes());
        assertEquals(
                3,
                hitBlocks(cache, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5),
                "the leaves went first, so what is left is still a prefix");

        cache.capacity(BLOCK);
        assertEquals(1, cache.blocks());
        assertEquals(1, hitBlocks(cache, 1, 1));
        assertEquals(BLOCK, cache.evictTo(0));
        assertEquals(0, cache.blocks());
    }

    @Test
    void eventsAreNetChangesAndTheSnapshotMatchesTheDrainedState() {
        BlockCache cache = cache(2);
        int[] a = {1, 1, 2, 2};
        long[] hashes = BlockHashes.of(FP, LAYOUT.blockSize(), a);
        store(cache, a);
        BlockCache.Events first = cache.drainEvents();
        assertArrayEquals(hashes, first.stored());
        assertEquals(0, first.removed().length);
        assertTrue(cache.drainEvents().isEmpty());

        store(cache, 3, 3); // evicts a's leaf
        store(cache, 4, 4); // then a's root, which rejoined the leaves older than 3,3
        Map.Entry<BlockCache.Events, long[]> drained = cache.drainWithSnapshot();
        assertEquals(Set.of(hashes[0], hashes[1]), set(drained.getKey().removed()));
        assertEquals(2, drained.getKey().stored().length);
        assertEquals(set(drained.getKey().stored()), set(drained.getValue()));

        store(cache, 5, 5); // stored, then evicted before the next drain: in neither list
        store(cache, 6, 6);
        store(cache, 7, 7);
        BlockCache.Events net = cache.drainEvents();
        long h5 = BlockHashes.of(FP, LAYOUT.blockSize(), new int[] {5, 5})[0];
        assertFalse(set(net.stored()).contains(h5));
        assertFalse(set(net.removed()).contains(h5));
        assertEquals(2, net.stored().length);
        assertEquals(2, net.removed().length);
    }
}
