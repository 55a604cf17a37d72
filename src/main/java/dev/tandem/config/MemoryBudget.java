package dev.tandem.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * One JVM's memory budget and how it is split: everything that holds KV or grows with traffic draws
 * from it, so that what a node may keep adds up to less than its heap. Before, each worker had its own
 * fixed capacity (4 GiB per decode worker, 1 GiB per prefill worker's prefix cache): {@code tandem all}
 * could keep 10 GiB in a 6 GiB heap, and a soak ended in OutOfMemoryError.
 *
 * <p>The budget is {@code memory.heap-fraction} of the max heap left after the model's weights (or
 * {@code memory.budget-bytes}). The split:
 *
 * <ul>
 *   <li>the router, when the node runs one: {@value #ROUTER_SHARE_PERCENT}% of the budget beside workers,
 *       all of it on a router-only node — 60% the prefix index, 20% the routed-prefix trees, 20% tokenizers
 *       learned from the cluster;
 *   <li>prefill workers' KV in flight (the prompt being computed and its encoded chunks), reserved first;
 *   <li>the rest to the workers by weight: {@value #DECODE_WEIGHT} per decode worker (its running, parked,
 *       incoming and kept sequences: {@code worker.kv-capacity-bytes}), {@value #PREFILL_WEIGHT} per
 *       prefill worker with a prefix cache ({@code worker.prefix-cache-bytes}).
 * </ul>
 *
 * Workers that front a GPU server hold no KV here and take no share. Pure: the caller logs.
 *
 * @param totalBytes            the whole budget, in heap bytes
 * @param origin                how the total was derived, for the start-up banner
 * @param decodeWorkerBytes     heap bytes per decode worker
 * @param prefillWorkerBytes    heap bytes per prefill worker's prefix cache
 * @param prefillInFlightBytes  heap bytes reserved per prefill worker for the KV it computes and ships
 * @param prefixIndexBytes      the router's prefix index
 * @param routedTreeBytes       the router's routed-prefix trees (policy {@code cache-aware}), over every model
 * @param tokenizerBytes        tokenizers the router fetched from the cluster
 */
public record MemoryBudget(
        long totalBytes,
        String origin,
        Shape shape,
        long decodeWorkerBytes,
        long prefillWorkerBytes,
        long prefillInFlightBytes,
        long prefixIndexBytes,
        long routedTreeBytes,
        long tokenizerBytes) {

    static final int ROUTER_SHARE_PERCENT = 5;
    static final int DECODE_WEIGHT = 4;
    static final int PREFILL_WEIGHT = 1;

    /**
     * What a prefix index entry costs at most: a {@code long} in an open-addressing set between half and a
     * quarter full, 8 to 24 bytes.
     */
    public static final long PREFIX_INDEX_ENTRY_BYTES = 24;

    /** What a routed-prefix tree entry costs: a LinkedHashMap entry, its boxed key and its table slot. */
    public static final long ROUTED_TREE_ENTRY_BYTES = 80;

    /**
     * A GPU server's KV is counted in its own memory, not the heap: {@code auto} gives its worker this
     * nominal capacity, of which only the used share (from the server's metrics) matters.
     */
    public static final long UPSTREAM_NOMINAL_KV_BYTES = 4L << 30;

    /**
     * What one JVM runs, as the budget sees it.
     *
     * @param kvOnHeap             false when the workers front a GPU server (engine {@code openai})
     * @param engineBytes          heap the loaded model keeps for its life (its weights)
     * @param prefillInFlightBytes heap one prefill worker's prompt in flight may take at most
     * @param prefixCaches         whether prefill workers keep a prefix cache ({@code prefix-cache-bytes} not 0)
     */
    public record Shape(
            boolean router,
            int prefillWorkers,
            int decodeWorkers,
            boolean kvOnHeap,
            long engineBytes,
            long prefillInFlightBytes,
            boolean prefixCaches) {}

    /**
     * What a KV block takes: {@code countedBytes} in the units capacities are counted in (an engine's
     * accelerator bytes; a simulated model counts its model's), {@code heapBytes} on this JVM's heap.
     */
    public record BlockCost(long countedBytes, long heapBytes) {
        /** The capacity, in counted bytes, of the whole blocks that fit in {@code heap} bytes of heap. */
        long capacityOf(long heap) {
            return heap / heapBytes * countedBytes;
        }
    }

    /** Splits {@code maxHeapBytes} (the JVM's {@code Runtime.maxMemory()}) for a node of this shape. */
    public static MemoryBudget plan(MemorySettings settings, long maxHeapBytes, Shape shape) {
        long total;
        String origin;
        if (settings.budgetBytes() > 0) {
            total = settings.budgetBytes();
            origin = "memory.budget-bytes";
        } else {
            long available = Math.max(0, maxHeapBytes - shape.engineBytes());
            total = (long) (settings.heapFraction() * available);
            origin = String.format(
                    Locale.ROOT,
                    "%s × (%s max heap − %s model)",
                    settings.heapFraction(),
                    bytes(maxHeapBytes),
                    bytes(shape.engineBytes()));
        }
        int prefill = shape.kvOnHeap() ? shape.prefillWorkers() : 0;
        int decode = shape.kvOnHeap() ? shape.decodeWorkers() : 0;
        long router = !shape.router() ? 0 : prefill + decode == 0 ? total : total * ROUTER_SHARE_PERCENT / 100;
        long inFlight = prefill == 0 ? 0 : Math.min(shape.prefillInFlightBytes(), (total - router) / (2L * prefill));
        long workers = total - router - prefill * inFlight;
        long units = (long) DECODE_WEIGHT * decode + (shape.prefixCaches() ? (long) PREFILL_WEIGHT * prefill : 0);
        long unit = units == 0 ? 0 : workers / units;
        return new MemoryBudget(
                total,
                origin,
                shape,
                decode == 0 ? 0 : DECODE_WEIGHT * unit,
                prefill == 0 || !shape.prefixCaches() ? 0 : PREFILL_WEIGHT * unit,
                inFlight,
                router * 60 / 100,
                router * 20 / 100,
                router - router * 60 / 100 - router * 20 / 100);
    }

    /**
     * The workers' settings with their capacities set from this budget: {@code auto} becomes the worker's
     * share, a configured value above its share is lowered to it (and {@code warn} told both numbers).
     */
    public WorkerSettings workerSettings(WorkerSettings configured, BlockCost block, Consumer<String> warn) {
        if (!shape.kvOnHeap()) {
            long kv = configured.kvCapacityBytes() == WorkerSettings.AUTO
                    ? UPSTREAM_NOMINAL_KV_BYTES
                    : configured.kvCapacityBytes();
            long prefix = configured.prefixCacheBytes() == WorkerSettings.AUTO ? 0 : configured.prefixCacheBytes();
            return configured.withKvCapacityBytes(kv).withPrefixCacheBytes(prefix);
        }
        long kv = fit(
                "worker.kv-capacity-bytes",
                "a decode worker's",
                configured.kvCapacityBytes(),
                block.capacityOf(decodeWorkerBytes),
                shape.decodeWorkers() > 0,
                warn);
        long prefix = fit(
                "worker.prefix-cache-bytes",
                "a prefill worker's",
                configured.prefixCacheBytes(),
                block.capacityOf(prefillWorkerBytes),
                shape.prefillWorkers() > 0,
                warn);
        return configured.withKvCapacityBytes(kv).withPrefixCacheBytes(prefix);
    }

    private static long fit(
            String key, String whose, long configured, long share, boolean used, Consumer<String> warn) {
        if (configured == WorkerSettings.AUTO) {
            return share;
        }
        if (configured > share && used) {
            warn.accept(key + " " + configured + " (" + bytes(configured) + ") is above " + whose
                    + " share of the memory budget, " + share + " (" + bytes(share) + "): lowered to it");
            return share;
        }
        return configured;
    }

    /** The most entries the router's prefix index holds. */
    public long prefixIndexEntries() {
        return prefixIndexBytes / PREFIX_INDEX_ENTRY_BYTES;
    }

    /** The most blocks the router's routed-prefix trees hold together. */
    public long routedTreeBlocks() {
        return Math.max(1, routedTreeBytes / ROUTED_TREE_ENTRY_BYTES);
    }

    /** The start-up banner's lines: the budget and each share. */
    public List<String> describe() {
        List<String> lines = new ArrayList<>();
        lines.add("memory budget " + bytes(totalBytes) + " = " + origin);
        if (shape.kvOnHeap() && shape.decodeWorkers() > 0) {
            lines.add("  decode workers: " + shape.decodeWorkers() + " × " + bytes(decodeWorkerBytes)
                    + " (running, parked, incoming and kept KV)");
        }
        if (shape.kvOnHeap() && shape.prefillWorkers() > 0) {
            lines.add("  prefill workers: " + shape.prefillWorkers() + " × " + bytes(prefillWorkerBytes)
                    + " prefix cache + " + bytes(prefillInFlightBytes) + " in flight");
        }
        if (shape.router()) {
            lines.add("  router: prefix index " + bytes(prefixIndexBytes) + " (" + prefixIndexEntries()
                    + " entries), routed-prefix trees " + bytes(routedTreeBytes) + ", tokenizers "
                    + bytes(tokenizerBytes));
        }
        return lines;
    }

    /** Bytes as people read them: 1.50 GiB, 12.0 MiB. */
    public static String bytes(long n) {
        if (n >= 1L << 30) {
            return String.format(Locale.ROOT, "%.2f GiB", n / (double) (1L << 30));
        }
        if (n >= 1L << 20) {
            return String.format(Locale.ROOT, "%.1f MiB", n / (double) (1L << 20));
        }
        if (n >= 1L << 10) {
            return String.format(Locale.ROOT, "%.1f KiB", n / 1024.0);
        }
        return n + " B";
    }
}
