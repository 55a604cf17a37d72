package dev.tandem.engine.reference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class SpinningPartnersTest {

    @Test
    void everyPieceRunsExactlyOnceAndTheCallerHelps() {
        SpinningPartners partners = new SpinningPartners(2, "test-partner");
        for (int job = 0; job < 200; job++) { // partners spinning, then parked between some jobs
            int pieces = 1 + job % 37;
            AtomicIntegerArray runs = new AtomicIntegerArray(pieces);
            Set<String> threads = ConcurrentHashMap.newKeySet();
            assertTrue(partners.run(pieces, i -> {
                runs.incrementAndGet(i);
                threads.add(Thread.currentThread().getName());
            }));
            for (int i = 0; i < pieces; i++) {
                assertEquals(1, runs.get(i), "job " + job + " piece " + i);
            }
            assertTrue(threads.stream()
                    .allMatch(t -> t.startsWith("test-partner-")
                            || t.equals(Thread.currentThread().getName())));
            if (job % 50 == 0) {
                parkAll(partners);
            }
        }
    }

    @Test
    void aFailingPieceIsThrownToTheCallerAfterTheOthersRan() {
        SpinningPartners partners = new SpinningPartners(1, "test-partner");
        AtomicIntegerArray runs = new AtomicIntegerArray(16);
        IllegalStateException failure = new IllegalStateException("piece 5");
        IllegalStateException thrown = assertThrows(
                IllegalStateException.class,
                () -> partners.run(16, i -> {
                    runs.incrementAndGet(i);
                    if (i == 5) {
                        throw failure;
                    }
                }));
        assertSame(failure, thrown);
        for (int i = 0; i < 16; i++) {
            assertEquals(1, runs.get(i));
        }
        assertTrue(partners.run(3, i -> {}), "the partners take jobs again");
    }

    @Test
    void aSecondCallerIsToldToRunItselfWhileTheFirstHoldsThePartners() throws Exception {
        SpinningPartners partners = new SpinningPartners(1, "test-partner");
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread first = new Thread(() -> partners.run(1, i -> {
            inside.countDown();
            await(release);
        }));
        first.start();
        assertTrue(inside.await(10, TimeUnit.SECONDS));
        assertFalse(partners.run(4, i -> {}), "busy: the caller runs its product itself");
        release.countDown();
        first.join(10_000);
        assertTrue(partners.run(4, i -> {}));
    }

    @Test
    void noPartnersMeansTheCallerRunsItself() {
        assertFalse(new SpinningPartners(0, "none").run(4, i -> {}));
    }

    /** Waits (bounded) until every partner thread of this test has parked. */
    private static void parkAll(SpinningPartners partners) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline
                && Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().startsWith("test-partner-"))
                        .anyMatch(t -> t.getState() == Thread.State.RUNNABLE)) {
            Thread.onSpinWait();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
