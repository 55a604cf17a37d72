package dev.tandem.router.flow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The router's waiting room, table-driven: a script of offers ({@code +tenant/priority/item}), charges
 * ({@code $tenant/tokens}) and polls ({@code ?}) against the order the polls must give.
 */
class FairQueueTest {

    static Stream<Arguments> scripts() {
        return Stream.of(
                Arguments.of(
                        "higher band first, whatever arrived first", true, "+a/0/a1 +b/5/b1 +a/0/a2 ? ? ?", "b1 a1 a2"),
                Arguments.of(
                        "first come, first served inside a tenant", true, "+a/0/a1 +a/0/a2 +a/0/a3 ? ? ?", "a1 a2 a3"),
                Arguments.of(
                        "fairness: the tenant served fewer tokens goes first",
                        true,
                        "+a/0/a1 +b/0/b1 $a/100 ? ?",
                        "b1 a1"),
                Arguments.of(
                        "fairness off: arrival order across tenants",
                        false,
                        "+a/0/a1 +a/0/a2 +b/0/b1 $a/100 ? ? ?",
                        "a1 a2 b1"),
                Arguments.of(
                        "a tenant that starts waiting is lifted to the lowest counter: idle time banks nothing",
                        true,
                        // b was served 1000 tokens while a was idle; a's counter is lifted to b's, so b is not
                        // starved by the 1000 tokens a did not use; ties go to the shorter backlog (b: 1 waiting).
                        "$b/1000 +b/0/b1 +a/0/a1 +a/0/a2 ? ? ?",
                        "b1 a1 a2"),
                Arguments.of(
                        "equal counters: the lighter backlog first, so a quiet tenant passes a heavy one",
                        true,
                        "+n/0/n1 +n/0/n2 +n/0/n3 +q/0/q1 ? ? ? ?",
                        "q1 n1 n2 n3"),
                Arguments.of(
                        "a heavy tenant and a light one alternate by tokens served",
                        true,
                        "+n/0/n1 +n/0/n2 +n/0/n3 +q/0/q1 +q/0/q2 ? $q/10 ? $n/10 ? $q/10 ? $n/10 ?",
                        "q1 n1 q2 n2 n3"),
                Arguments.of(
                        "bands are strict even against fairness", true, "$h/1000000 +l/0/l1 +h/1/h1 ? ?", "h1 l1"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scripts")
    void servesInOrder(String name, boolean fairness, String script, String expected) {
        FairQueue<String> queue = new FairQueue<>(10, fairness);
        List<String> polled = new ArrayList<>();
        for (String op : script.split(" ")) {
            String[] f = op.substring(1).split("/");
            switch (op.charAt(0)) {
                case '+' ->
                    assertTrue(queue.offer(f[0], Integer.parseInt(f[1]), f[2]).queued());
                case '$' -> queue.charge(f[0], Long.parseLong(f[1]));
                case '?' -> polled.add(queue.poll());
                default -> throw new IllegalArgumentException(op);
            }
        }
        assertEquals(expected, String.join(" ", polled));
        assertTrue(queue.isEmpty());
        assertNull(queue.poll());
    }

    @ParameterizedTest(name = "credit {0}: {1}")
    @MethodSource("credits")
    void creditLetsALightTenantsBurstGoFirst(long credit, String expected) {
        FairQueue<String> queue = new FairQueue<>(10, 100, true, credit);
        queue.charge("n", 1000);
        queue.offer("n", 0, "n1");
        queue.offer("n", 0, "n2");
        queue.offer("n", 0, "n3");
        queue.offer("l", 0, "l1");
        queue.offer("l", 0, "l2");
        List<String> polled = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String next = queue.poll();
            polled.add(next);
            queue.charge(next.substring(0, 1), 300);
        }
        assertEquals(expected, String.join(" ", polled));
    }

    static Stream<Arguments> credits() {
        return Stream.of(
                Arguments.of(0L, "l1 n1 l2"), // VTC's lift: l is at n's counter, and alternates with it
                Arguments.of(500L, "l1 l2 n1")); // 500 tokens of credit: l's burst of two goes first
    }

    @Test
    void aTenantHoldsAtMostItsBoundAndOthersAreUnaffected() {
        FairQueue<String> queue = new FairQueue<>(2, true);
        assertTrue(queue.offer("a", 0, "a1").queued());
        assertTrue(queue.offer("a", 3, "a2").queued());
        assertFalse(queue.offer("a", 0, "a3").queued(), "a's third request, over its bound in any band");
        assertTrue(queue.offer("b", 0, "b1").queued());
        assertEquals(2, queue.waiting("a"));
        assertEquals(3, queue.size());
    }

    @Test
    void aFullQueueDropsTheHeaviestTenantsNewestForALighterOne() {
        FairQueue<String> queue = new FairQueue<>(10, 3, true);
        queue.offer("heavy", 0, "h1");
        queue.offer("heavy", 0, "h2");
        queue.offer("heavy", 0, "h3");
        FairQueue.Offered<String> offered = queue.offer("light", 0, "l1");
        assertTrue(offered.queued());
        assertEquals("h3", offered.evicted(), "heavy (3 waiting) makes room for light (none)");
        assertFalse(queue.offer("light", 0, "l2").queued(), "heavy (2) is not heavier than light would be (2)");
        FairQueue.Offered<String> refused = queue.offer("heavy", 0, "h4");
        assertFalse(refused.queued(), "the heaviest tenant pushes nobody out");
        assertNull(refused.evicted());
        FairQueue.Offered<String> high = queue.offer("vip", 9, "v1");
        assertTrue(high.queued(), "a higher band pushes out the lowest band's heaviest");
        assertEquals("h2", high.evicted());
        assertEquals(3, queue.size());
        assertFalse(queue.offer("low", -1, "x1").queued(), "a lower band pushes out nobody above it");
        assertEquals("v1", queue.poll());
        assertEquals(1, queue.waiting("heavy"));
    }

    @Test
    void aRemovedRequestIsGoneAtOnceAndFreesItsPlace() {
        FairQueue<String> queue = new FairQueue<>(1, true);
        String item = "a1";
        assertTrue(queue.offer("a", 0, item).queued());
        assertFalse(queue.remove("a", 1, item), "not in that band");
        assertTrue(queue.remove("a", 0, item));
        assertFalse(queue.remove("a", 0, item), "only once");
        assertEquals(0, queue.size());
        assertEquals(0, queue.waiting("a"));
        assertTrue(queue.offer("a", 0, "a2").queued(), "its place is free again");
        assertEquals("a2", queue.poll());
    }

    @Test
    void countersOfIdleTenantsAreBounded() {
        FairQueue<String> queue = new FairQueue<>(1, true);
        for (int i = 0; i < FairQueue.MAX_IDLE_COUNTERS + 10; i++) {
            queue.charge("t" + i, 1);
        }
        assertTrue(queue.offer("w", 0, "w1").queued());
        assertEquals(0, queue.counter("t0"), "an idle tenant's counter went: it would be lifted on return anyway");
        assertEquals("w1", queue.poll());
    }
}
