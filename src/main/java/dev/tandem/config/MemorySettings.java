package dev.tandem.config;

/**
 * How much of the JVM's heap KV and everything else that grows with traffic may take in all (the
 * {@code memory} section). {@link MemoryBudget} splits it between the node's workers and router.
 *
 * @param heapFraction the budget as a share of the max heap left after the model's weights
 * @param budgetBytes  the budget in bytes instead (0 = from {@code heapFraction}); for a JVM that shares its
 *                     heap with something else, and for tests
 * @param preallocate  whether the workers' KV blocks are allocated at start, as inference servers reserve
 *                     their KV cache: the heap is sized once, before traffic, and does not grow with it
 */
public record MemorySettings(double heapFraction, long budgetBytes, boolean preallocate) {

    /**
     * 0.3: with Tandem's own objects the live heap stays well under G1's 45% initiating occupancy, so its
     * concurrent cycles and mixed collections stay occasional (in a 1 GiB heap too).
     */
    public static final double DEFAULT_HEAP_FRACTION = 0.3;

    static MemorySettings read(ConfigSection s) {
        MemorySettings m = new MemorySettings(
                s.decimal("heap-fraction", DEFAULT_HEAP_FRACTION, 0.05, 0.9),
                s.integer("budget-bytes", 0, 0, 1L << 44),
                s.bool("preallocate", true));
        s.rejectUnknownKeys();
        return m;
    }
}
