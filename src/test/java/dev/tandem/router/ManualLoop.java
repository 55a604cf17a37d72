package dev.tandem.router;

import java.util.ArrayDeque;
import java.util.Map;
import java.util.TreeMap;

/**
 * A {@link RouterLoop} driven by the test: time moves only when {@link #advance} says, queued tasks run
 * when {@link #runPending} (or {@link #advance}) runs them, all on the test's thread.
 */
final class ManualLoop implements RouterLoop {
    private record Timer(long dueNanos, long id) implements Comparable<Timer> {
        @Override
        public int compareTo(Timer o) {
            return dueNanos != o.dueNanos ? Long.compare(dueNanos, o.dueNanos) : Long.compare(id, o.id);
        }
    }

    /** Not 0: a clock reading of 0 must not look like "never". */
    private long now = 1_000_000_000L;

    private long nextTimer;
    private final ArrayDeque<Runnable> pending = new ArrayDeque<>();
    private final TreeMap<Timer, Runnable> timers = new TreeMap<>();

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public void execute(Runnable task) {
        pending.add(task);
    }

    @Override
    public long setTimer(long delayMs, Runnable task) {
        long id = nextTimer++;
        timers.put(new Timer(now + delayMs * 1_000_000, id), task);
        return id;
    }

    @Override
    public void cancelTimer(long timerId) {
        timers.keySet().removeIf(t -> t.id() == timerId);
    }

    /** Runs queued tasks, and those they queue, until none is left. */
    void runPending() {
        while (!pending.isEmpty()) {
            pending.poll().run();
        }
    }

    /** Moves the clock by {@code ms}, firing every timer that comes due on the way, in order. */
    void advance(long ms) {
        long until = now + ms * 1_000_000;
        runPending();
        while (!timers.isEmpty() && timers.firstKey().dueNanos() <= until) {
            Map.Entry<Timer, Runnable> next = timers.pollFirstEntry();
            now = next.getKey().dueNanos();
            next.getValue().run();
            runPending();
        }
        now = until;
    }

    int timers() {
        return timers.size();
    }
}
