package dev.tandem.api.http;

import io.vertx.core.Context;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes the SSE events streams gathered during an event-loop turn, one write per stream per turn.
 * A write on a connection that is not reading flushes at once — a syscall per token per stream — so
 * with many streams the router's loop spent its time in writes (JFR at 256 streams). Token batches
 * that queue up on the loop while it is busy now go out together; when it is idle the flush runs right
 * after the batch, so no token waits for another.
 */
final class SseFlusher {
    /** A stream with events waiting to be written. */
    interface Pending {
        void writePending();
    }

    private final Context context;
    private final List<Pending> dirty = new ArrayList<>();
    private boolean scheduled;

    SseFlusher(Context context) {
        this.context = context;
    }

    boolean runsOn(Context context) {
        return this.context == context;
    }

    /** {@code stream} has events waiting: they are written after the tasks queued on the loop now. Loop only. */
    void schedule(Pending stream) {
        dirty.add(stream);
        if (!scheduled) {
            scheduled = true;
            context.runOnContext(v -> flush());
        }
    }

    private void flush() {
        scheduled = false;
        // A stream written here may end and schedule nothing new; one scheduled meanwhile waits for the next turn.
        List<Pending> now = List.copyOf(dirty);
        dirty.clear();
        for (Pending p : now) {
            p.writePending();
        }
    }
}
