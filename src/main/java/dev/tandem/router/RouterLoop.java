package dev.tandem.router;

/**
 * The event loop the request core runs confined to, and its clock: every request's state is touched
 * only from tasks run here, so it needs no locks. Vert.x's context in a node ({@link VertxRouterLoop});
 * a hand-driven loop in unit tests, which makes timeouts and stalls deterministic.
 */
public interface RouterLoop {

    /** A monotonic clock in nanoseconds ({@link System#nanoTime()} in production). */
    long nanoTime();

    /** Runs {@code task} on the loop, later — never inline, so a caller's own state is settled first. */
    void execute(Runnable task);

    /** Runs {@code task} on the loop once, after {@code delayMs}; returns an id for {@link #cancelTimer}. */
    long setTimer(long delayMs, Runnable task);

    void cancelTimer(long timerId);
}
