package dev.tandem.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Blocks go back to the pool when their last holder lets go, come out again zeroed, and the bound holds. */
class KvBlockPoolTest {
    private static final KvLayout LAYOUT = new KvLayout(1, 1, 2, 2);

    @Test
    void aBlockComesBackOnlyWhenItsLastHolderLetsGoAndOutAgainZeroed() {
        KvBlockPool pool = new KvBlockPool(LAYOUT, 10);
        KvBlock b = pool.take();
        Arrays.fill(b.data(), 7f);
        b.retain(); // a prefix cache keeps it too
        b.release(); // the sequence ends
        assertEquals(0, pool.idle(), "the cache still holds it");
        b.release(); // evicted
        assertEquals(1, pool.idle());
        KvBlock again = pool.take();
        assertSame(b, again, "handed out again, not allocated");
        assertArrayEquals(new float[LAYOUT.blockFloats()], again.data(), "zeroed: no other sequence's K/V shows");
        assertEquals(1, pool.allocated());
        assertEquals(1, pool.reused());
        assertEquals(1, again.refs());
    }

    @Test
    void aBlockToFillIsNotZeroedForNothing() {
        KvBlockPool pool = new KvBlockPool(LAYOUT, 10);
        KvBlock b = pool.take();
        b.data()[0] = 3f;
        b.release();
        assertEquals(3f, pool.takeDirty().data()[0], "its caller overwrites every float anyway");
    }

    @Test
    void beyondItsBoundTheBlocksGivenBackAreDropped() {
        KvBlockPool pool = new KvBlockPool(LAYOUT, 2);
        KvBlock a = pool.take();
        KvBlock b = pool.take();
        KvBlock c = pool.take(); // all three in use: the bound never refuses
        assertEquals(3, pool.live());
        a.release(); // 3 alive > 2: dropped
        assertEquals(2, pool.live());
        assertEquals(0, pool.idle());
        b.release(); // 2 alive: kept
        c.release();
        assertEquals(2, pool.live());
        assertEquals(2, pool.idle());
        assertNotSame(a, pool.take());
    }

    @Test
    void fillingReservesEveryBlockTheBoundAllowsAndTrafficThenAllocatesNothing() {
        KvBlockPool pool = new KvBlockPool(LAYOUT, 5);
        assertEquals(5, pool.fill());
        assertEquals(0, pool.fill(), "already full");
        assertEquals(5, pool.idle());
        KvBlock a = pool.take();
        KvBlock b = pool.takeDirty();
        a.release();
        b.release();
        assertEquals(5, pool.allocated(), "taken from the reserve, not allocated");
        assertEquals(5, pool.live());
    }

    @Test
    void releasingMoreThanWasHeldOrRetainingAGivenBackBlockFails() {
        KvBlockPool pool = new KvBlockPool(LAYOUT, 10);
        KvBlock b = pool.take();
        b.release();
        assertThrows(IllegalStateException.class, b::retain, "it may be someone else's by now");
        KvBlock unpooled = KvBlock.unpooled(new float[LAYOUT.blockFloats()]);
        unpooled.release();
        assertThrows(IllegalStateException.class, unpooled::release);
    }

    @Test
    void aCacheGivesItsBlocksBackWhenFreedAndTakesOverTheReferencesItIsGiven() {
        KvBlockPool pool = new KvBlockPool(LAYOUT, 10);
        KvCache kept = new KvCache(LAYOUT, pool);
        kept.ensureCapacity(4); // two blocks of two positions
        KvCache sequence = new KvCache(LAYOUT, pool);
        sequence.addBlock(kept.kvBlock(0).retain()); // a prefix hit: the sequence holds a reference of its own
        sequence.ensureCapacity(4);
        kept.free();
        assertEquals(1, pool.idle(), "the block the sequence still uses stays out");
        sequence.free();
        assertEquals(3, pool.idle());
        assertEquals(3, pool.live());
    }
}
