package dev.tandem.router;

import io.vertx.core.Context;

/** The request core's loop on a Vert.x context (the router verticle's). */
public final class VertxRouterLoop implements RouterLoop {
    private final Context context;

    public VertxRouterLoop(Context context) {
        this.context = context;
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public void execute(Runnable task) {
        context.runOnContext(v -> task.run());
    }

    /** Called on the context (like everything of the core), so the timer fires on it too. */
    @Override
    public long setTimer(long delayMs, Runnable task) {
        return context.owner().setTimer(delayMs, id -> task.run());
    }

    @Override
    public void cancelTimer(long timerId) {
        context.owner().cancelTimer(timerId);
    }
}
