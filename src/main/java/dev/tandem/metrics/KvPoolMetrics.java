package dev.tandem.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.LongSupplier;

/**
 * A node's KV block pool: blocks alive (in use or idle) and idle, and how many were allocated or handed
 * out again. Allocations that keep rising after warm-up mean the blocks in use outgrew the pool's bound.
 */
public final class KvPoolMetrics {
    /** A FunctionCounter holds its object weakly: the suppliers live as long as this. */
    private final LongSupplier allocated;

    private final LongSupplier reused;

    public KvPoolMetrics(
            MeterRegistry registry, LongSupplier live, LongSupplier idle, LongSupplier allocated, LongSupplier reused) {
        this.allocated = allocated;
        this.reused = reused;
        Gauge.builder("tandem.kv.pool.blocks", live::getAsLong)
                .tag("state", "live")
                .description("KV blocks the node's pool keeps alive, in use or idle")
                .register(registry);
        Gauge.builder("tandem.kv.pool.blocks", idle::getAsLong)
                .tag("state", "idle")
                .description("KV blocks idle in the node's pool, ready to be handed out again")
                .register(registry);
        FunctionCounter.builder("tandem.kv.pool.allocated", this, m -> m.allocated.getAsLong())
                .description("KV blocks allocated (new arrays)")
                .register(registry);
        FunctionCounter.builder("tandem.kv.pool.reused", this, m -> m.reused.getAsLong())
                .description("KV blocks handed out again instead of allocated")
                .register(registry);
    }
}
