package dev.tandem.router.flow;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The router's waiting room: requests wait in bounded per-tenant queues inside priority bands. The highest
 * band with anyone waiting is served first; within a band, with fairness on, the tenant whose virtual token
 * counter is lowest (the tokens it was served: prompt and generated, {@link #charge}) — Sheng et al.'s VTC,
 * "Fairness in Serving Large Language Models" (OSDI '24) — and first come, first served inside a tenant.
 * With fairness off, a band is one queue in arrival order.
 *
 * <p>A tenant that starts waiting has its counter lifted to the lowest counter of the tenants already
 * waiting in its band (or, if none waits, to the counter of the tenant served last), less a bounded credit:
 * being idle banks at most that credit, so a tenant back from a pause cannot starve the others by the tokens
 * it did not use, while a light tenant's short burst is served ahead of a heavy one's backlog. (With no
 * credit, VTC's own lift, a quiet tenant's second request in a burst alternated with the noisy tenant's and
 * waited for its slot.) Pure and
 * single-threaded: the router's loop owns it. Equal counters go to the tenant with fewer requests waiting,
 * then to the older request.
 */
public final class FairQueue<T> {
    /** Counters of tenants not waiting are dropped past this many: they would be lifted on return anyway. */
    static final int MAX_IDLE_COUNTERS = 4096;

    private final int maxPerTenant;
    private final int maxTotal;
    private final boolean fairness;
    private final long credit;
    private final TreeMap<Integer, Map<String, ArrayDeque<Waiting<T>>>> bands =
            new TreeMap<>(Comparator.reverseOrder());
    private final Map<String, Long> counters = new HashMap<>();
    private final Map<String, Integer> waitingPerTenant = new HashMap<>();
    private long arrivals;
    private long lastServedCounter;
    private int size;

    private record Waiting<T>(T item, long arrival) {}

    /**
     * @param maxPerTenant how many requests one tenant may have waiting (over all bands)
     * @param maxTotal     how many may wait in all
     * @param fairness     VTC within a band, else arrival order
     */
    public FairQueue(int maxPerTenant, int maxTotal, boolean fairness) {
        this(maxPerTenant, maxTotal, fairness, 0);
    }

    /**
     * @param credit tokens a tenant that starts waiting keeps below the lowest waiting counter: a light tenant's
     *               burst of a few requests goes ahead of a heavy tenant's backlog instead of alternating with it
     *               (0: VTC's lift, to the lowest counter exactly)
     */
    public FairQueue(int maxPerTenant, int maxTotal, boolean fairness, long credit) {
        this.maxPerTenant = maxPerTenant;
        this.maxTotal = maxTotal;
        this.fairness = fairness;
        this.credit = credit;
    }

    /** Unbounded in total. */
    public FairQueue(int maxPerTenant, boolean fairness) {
        this(maxPerTenant, Integer.MAX_VALUE, fairness);
    }

    /**
     * What {@link #offer} did: queued the request or not, and the request it pushed out to make room (null
     * when none).
     */
    public record Offered<T>(boolean queued, T evicted) {}

    /**
     * Queues {@code item}, unless its tenant already has {@code maxPerTenant} waiting. When {@code maxTotal}
     * wait already, a heavier tenant makes room — longest queue drop: the newest request of the tenant with the
     * most waiting in the lowest band at or below {@code priority}, if it has more waiting than this one's
     * tenant — else nothing is queued. So one tenant cannot fill the room the others need.
     */
    public Offered<T> offer(String tenant, int priority, T item) {
        int waiting = waitingPerTenant.getOrDefault(tenant, 0);
        if (waiting >= maxPerTenant) {
            return new Offered<>(false, null);
        }
        T evicted = null;
        if (size >= maxTotal) {
            evicted = evictHeavierThan(waiting, priority);
            if (evicted == null) {
                return new Offered<>(false, null);
            }
        }
        Map<String, ArrayDeque<Waiting<T>>> band = bands.computeIfAbsent(priority, p -> new LinkedHashMap<>());
        ArrayDeque<Waiting<T>> queue = band.get(tenant);
        if (queue == null) {
            lift(tenant, band);
            queue = new ArrayDeque<>();
            band.put(tenant, queue);
        }
        queue.addLast(new Waiting<>(item, arrivals++));
        waitingPerTenant.merge(tenant, 1, Integer::sum);
        size++;
        return new Offered<>(true, evicted);
    }

    private T evictHeavierThan(int waiting, int priority) {
        for (Map.Entry<Integer, Map<String, ArrayDeque<Waiting<T>>>> band :
                bands.descendingMap().entrySet()) {
            if (band.getKey() > priority) {
                break;
            }
            String heaviest = null;
            int most = waiting + 1; // strictly heavier than the newcomer's tenant, once it is queued
            for (String t : band.getValue().keySet()) {
                int w = waitingPerTenant.get(t);
                if (w > most) {
                    heaviest = t;
                    most = w;
                }
            }
            if (heaviest != null) {
                T victim = band.getValue().get(heaviest).pollLast().item();
                removed(heaviest, band.getKey(), band.getValue());
                return victim;
            }
        }
        return null;
    }

    /** The next request to serve, taken out of the queue; null when none waits. */
    public T poll() {
        if (size == 0) {
            return null;
        }
        Map<String, ArrayDeque<Waiting<T>>> band = bands.firstEntry().getValue();
        String next = null;
        long best = Long.MAX_VALUE;
        long bestArrival = Long.MAX_VALUE;
        int bestWaiting = Integer.MAX_VALUE;
        for (Map.Entry<String, ArrayDeque<Waiting<T>>> e : band.entrySet()) {
            long key = fairness ? counter(e.getKey()) : 0;
            // Equal counters (a tenant that just started waiting is lifted to the lowest): the one with the
            // shorter backlog first, so a light tenant does not wait behind a heavy one's next request.
            int waiting = fairness ? e.getValue().size() : 0;
            long arrival = e.getValue().peekFirst().arrival();
            if (key < best
                    || key == best && (waiting < bestWaiting || waiting == bestWaiting && arrival < bestArrival)) {
                next = e.getKey();
                best = key;
                bestWaiting = waiting;
                bestArrival = arrival;
            }
        }
        lastServedCounter = counter(next);
        Waiting<T> w = band.get(next).pollFirst();
        removed(next, bands.firstKey(), band);
        return w.item();
    }

    /** Takes {@code item} out wherever it waits (a cancel or a deadline); false when it was not waiting. */
    public boolean remove(String tenant, int priority, T item) {
        Map<String, ArrayDeque<Waiting<T>>> band = bands.get(priority);
        ArrayDeque<Waiting<T>> queue = band == null ? null : band.get(tenant);
        if (queue == null) {
            return false;
        }
        for (Iterator<Waiting<T>> it = queue.iterator(); it.hasNext(); ) {
            if (it.next().item() == item) {
                it.remove();
                removed(tenant, priority, band);
                return true;
            }
        }
        return false;
    }

    /** {@code tokens} were served to {@code tenant} (prompt tokens at dispatch, generated ones as they stream). */
    public void charge(String tenant, long tokens) {
        counters.merge(tenant, tokens, Long::sum);
    }

    /** The tenant's virtual token counter. */
    public long counter(String tenant) {
        return counters.getOrDefault(tenant, 0L);
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /** Requests {@code tenant} has waiting. */
    public int waiting(String tenant) {
        return waitingPerTenant.getOrDefault(tenant, 0);
    }

    private void lift(String tenant, Map<String, ArrayDeque<Waiting<T>>> band) {
        long floor = lastServedCounter;
        if (!band.isEmpty()) {
            floor = Long.MAX_VALUE;
            for (String other : band.keySet()) {
                floor = Math.min(floor, counter(other));
            }
        }
        floor -= credit;
        if (counter(tenant) < floor) {
            counters.put(tenant, floor);
        }
        if (counters.size() > MAX_IDLE_COUNTERS) {
            counters.keySet().removeIf(t -> !waitingPerTenant.containsKey(t) && !t.equals(tenant));
        }
    }

    private void removed(String tenant, int priority, Map<String, ArrayDeque<Waiting<T>>> band) {
        size--;
        if (band.get(tenant).isEmpty()) {
            band.remove(tenant);
            if (band.isEmpty()) {
                bands.remove(priority);
            }
        }
        int left = waitingPerTenant.get(tenant) - 1;
        if (left == 0) {
            waitingPerTenant.remove(tenant);
        } else {
            waitingPerTenant.put(tenant, left);
        }
    }
}
