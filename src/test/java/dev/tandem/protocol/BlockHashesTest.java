package dev.tandem.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Block identity: equal prefixes give equal hashes, anything else gives others. */
class BlockHashesTest {
    private static final int B = 4;

    private static int[] tokens(int n, long seed) {
        Random r = new Random(seed);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = r.nextInt(32000);
        }
        return out;
    }

    @Test
    void onlyFullBlocksAreNamed() {
        assertEquals(2, BlockHashes.of(7, B, tokens(11, 1)).length);
        assertEquals(0, BlockHashes.of(7, B, tokens(3, 1)).length);
        assertEquals(3, BlockHashes.of(7, B, tokens(12, 1)).length);
    }

    @Test
    void aSharedPrefixSharesItsHashesAndNothingAfter() {
        int[] a = tokens(20, 1);
        int[] b = Arrays.copyOf(a, 20);
        b[9] ^= 1; // in block 2
        long[] ha = BlockHashes.of(7, B, a);
        long[] hb = BlockHashes.of(7, B, b);
        assertArrayEquals(Arrays.copyOf(ha, 2), Arrays.copyOf(hb, 2));
        for (int i = 2; i < ha.length; i++) {
            assertNotEquals(ha[i], hb[i], "block " + i + " follows a different block");
        }
    }

    @Test
    void theSameTokensAfterAnotherPrefixOrModelAreAnotherBlock() {
        int[] a = tokens(8, 2);
        int[] swapped = new int[8];
        System.arraycopy(a, 4, swapped, 0, 4);
        System.arraycopy(a, 0, swapped, 4, 4);
        assertNotEquals(BlockHashes.of(7, B, a)[1], BlockHashes.of(7, B, swapped)[0]);
        assertNotEquals(BlockHashes.of(7, B, a)[0], BlockHashes.of(8, B, a)[0], "another model fingerprint");
        assertEquals(
                BlockHashes.of(7, B, a)[1],
                BlockHashes.chain(7, BlockHashes.of(7, B, a)[0], a, 4, 8),
                "the chain continues from the previous hash");
    }

    @Test
    void noCollisionsAcrossManyBlocks() {
        Set<Long> seen = new HashSet<>();
        for (long seed = 0; seed < 2000; seed++) {
            for (long h : BlockHashes.of(7, B, tokens(16, seed))) {
                seen.add(h);
            }
        }
        assertEquals(8000, seen.size());
    }

    @Test
    void moreBlocksThanTokensIsAnError() {
        assertThrows(IllegalArgumentException.class, () -> BlockHashes.of(7, B, tokens(7, 1), 2));
    }
}
