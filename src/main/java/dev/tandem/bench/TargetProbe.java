package dev.tandem.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Reads the soak target's state ({@link TargetSample}) from the bench's own thread: its /metrics always;
 * for a target the bench started (its pid known), /proc and, when asked, the heap after a full GC. A
 * probe that fails says so once and reads NaN from then on: a long soak does not stop for it.
 */
final class TargetProbe implements AutoCloseable {
    private final SoakEndpoint endpoint;
    private final long pid;
    private final PrintStream out;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private JvmHeapProbe heap;
    private boolean heapFailed;
    private boolean metricsFailed;

    /** @param pid the target's process id, or -1 when it is not the bench's child */
    TargetProbe(SoakEndpoint endpoint, long pid, PrintStream out) {
        this.endpoint = endpoint;
        this.pid = pid;
        this.out = out;
    }

    /**
     * The target's state: its /metrics first (under load, as they are), then the full GC if asked, then
     * /proc. Read after the GC, the resident set is comparable from minute to minute and with the end: a
     * full GC shrinks G1's heap, and read before it the figure said mostly how far the heap had grown back
     * since the last one (one run read 449 MB at its last minute and 333 MB at the end, after a GC).
     */
    TargetSample sample(boolean fullGc) {
        PrometheusText m = metrics();
        double afterGc = fullGc ? heapAfterGc() : Double.NaN;
        ProcStatus proc = pid < 0 ? ProcStatus.UNKNOWN : ProcStatus.of(pid);
        return new TargetSample(
                m.sum("tandem_kv_cache_bytes"),
                m.sum("tandem_worker_kv_used_bytes"),
                m.sum("tandem_router_in_flight"),
                m.sum("jvm_memory_used_bytes", "area=\"heap\""),
                afterGc,
                m.sum("process_resident_memory_bytes"),
                m.sum("jvm_threads_live_threads"),
                m.sum("process_files_open_files"),
                proc.rssBytes(),
                proc.threads(),
                proc.fds());
    }

    private PrometheusText metrics() {
        try {
            HttpResponse<String> r = http.send(endpoint.get("/metrics"), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 200) {
                return new PrometheusText(r.body());
            }
            warnMetrics("HTTP " + r.statusCode());
        } catch (IOException e) {
            warnMetrics(e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return new PrometheusText("");
    }

    private void warnMetrics(String why) {
        if (!metricsFailed) {
            metricsFailed = true;
            out.println("soak: the target's /metrics did not answer (" + why + "): its figures read null");
        }
    }

    private double heapAfterGc() {
        if (pid < 0 || heapFailed) {
            return Double.NaN;
        }
        try {
            if (heap == null) {
                heap = JvmHeapProbe.attach(pid);
            }
            return heap.heapAfterFullGc();
        } catch (IOException | RuntimeException e) {
            heapFailed = true;
            out.println("soak: cannot read the target's heap after GC (" + e + "): it reads null from now on");
            return Double.NaN;
        }
    }

    @Override
    public void close() {
        if (heap != null) {
            heap.close();
        }
    }
}
