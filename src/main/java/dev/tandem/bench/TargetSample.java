package dev.tandem.bench;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The target's state at one moment: from its /metrics (summed over workers where there are several),
 * the heap after a full GC (embedded target only, when a GC was asked for) and /proc (embedded only). NaN
 * for what could not be read.
 *
 * @param kvCacheBytes   {@code tandem_kv_cache_bytes}: KV kept for reuse (prefix caches, kept blocks)
 * @param kvUsedBytes    {@code tandem_worker_kv_used_bytes}: KV held by running sequences, as the router sees
 * @param routerInFlight {@code tandem_router_in_flight}: requests the router holds
 * @param heapUsedBytes  {@code jvm_memory_used_bytes{area="heap"}}: the heap at the scrape, garbage included
 * @param heapAfterLastGcBytes the heap right after the target's latest collection of its own (embedded only)
 * @param heapAfterGcBytes     the heap right after a full GC the bench asked for (embedded only; at minute 10,
 *                             at the end, and every minute with {@code --gc-each-minute})
 * @param rssBytes       {@code process_resident_memory_bytes}, at the scrape; {@code threads} and {@code
 *                       openFiles} are {@code jvm_threads_live_threads} and {@code process_files_open_files}
 * @param procRssBytes   VmRSS of {@code /proc/<pid>/status}, read after the full GC when there is one (so is
 *                       {@code procThreads}, {@code procFds}: the entries of {@code /proc/<pid>/fd})
 */
record TargetSample(
        double kvCacheBytes,
        double kvUsedBytes,
        double routerInFlight,
        double heapUsedBytes,
        double heapAfterLastGcBytes,
        double heapAfterGcBytes,
        double rssBytes,
        double threads,
        double openFiles,
        double procRssBytes,
        double procThreads,
        double procFds) {

    static final TargetSample UNKNOWN = new TargetSample(
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN);

    /** Every field by its name in summary.json (minutes.csv has them in snake case), in this order. */
    static final Map<String, ToDoubleFunction<TargetSample>> FIELDS = fields();

    private static Map<String, ToDoubleFunction<TargetSample>> fields() {
        Map<String, ToDoubleFunction<TargetSample>> f = new LinkedHashMap<>();
        f.put("kvCacheBytes", TargetSample::kvCacheBytes);
        f.put("kvUsedBytes", TargetSample::kvUsedBytes);
        f.put("routerInFlight", TargetSample::routerInFlight);
        f.put("heapUsedBytes", TargetSample::heapUsedBytes);
        f.put("heapAfterLastGcBytes", TargetSample::heapAfterLastGcBytes);
        f.put("heapAfterGcBytes", TargetSample::heapAfterGcBytes);
        f.put("rssBytes", TargetSample::rssBytes);
        f.put("threads", TargetSample::threads);
        f.put("openFiles", TargetSample::openFiles);
        f.put("procRssBytes", TargetSample::procRssBytes);
        f.put("procThreads", TargetSample::procThreads);
        f.put("procFds", TargetSample::procFds);
        return java.util.Collections.unmodifiableMap(f);
    }

    /** RSS as /proc says it, else as the target's metrics do. */
    double bestRssBytes() {
        return Double.isNaN(procRssBytes) ? rssBytes : procRssBytes;
    }
}
