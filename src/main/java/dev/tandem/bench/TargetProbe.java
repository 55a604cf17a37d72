package dev.tandem.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
     * The target's state: its /metrics first (under load, as they are) and the heap after its latest
     * collection; then, if asked, a full GC in a quiet gap — {@code traffic} (when there is any) pauses and
     * waits for its requests to end, so the pause lands on none — and /proc after it. Read after the GC,
     * the resident set is comparable from one such reading to the next: a full GC shrinks G1's heap (one run
     * read 449 MB at its last minute and 333 MB at the end, after a GC).
     */
    TargetSample sample(boolean fullGc, SoakTraffic traffic, long quietTimeoutMs) {
        PrometheusText m = metrics();
        double afterLastGc = heap() == null ? Double.NaN : heap.heapAfterLastGc();
        double afterFullGc = Double.NaN;
        if (fullGc) {
            boolean paused = traffic != null && quiet(traffic, quietTimeoutMs);
            afterFullGc = heapAfterFullGc();
            ProcStatus proc = pid < 0 ? ProcStatus.UNKNOWN : ProcStatus.of(pid);
            if (paused) {
                traffic.resume();
            }
            return sample(m, afterLastGc, afterFullGc, proc);
        }
        return sample(m, afterLastGc, afterFullGc, pid < 0 ? ProcStatus.UNKNOWN : ProcStatus.of(pid));
    }

    private static TargetSample sample(PrometheusText m, double afterLastGc, double afterFullGc, ProcStatus proc) {
        return new TargetSample(
                m.sum("tandem_kv_cache_bytes"),
                m.sum("tandem_worker_kv_used_bytes"),
                m.sum("tandem_router_in_flight"),
                m.sum("jvm_memory_used_bytes", "area=\"heap\""),
                afterLastGc,
                afterFullGc,
                m.sum("process_resident_memory_bytes"),
                m.sum("jvm_threads_live_threads"),
                m.sum("process_files_open_files"),
                proc.rssBytes(),
                proc.threads(),
                proc.fds());
    }

    /** Pauses the traffic until none of its requests is open; true once paused (resume it after). */
    private boolean quiet(SoakTraffic traffic, long timeoutMs) {
        try {
            traffic.pause().get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            out.println("soak: requests still open " + timeoutMs + " ms into a quiet gap; collecting anyway");
        } catch (ExecutionException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return true;
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

    private double heapAfterFullGc() {
        try {
            return heap() == null ? Double.NaN : heap.heapAfterFullGc();
        } catch (RuntimeException e) {
            failed(e);
            return Double.NaN;
        }
    }

    /** The JMX view of the target's heap, attached on first use; null for a target the bench did not start. */
    private JvmHeapProbe heap() {
        if (pid < 0 || heapFailed) {
            return null;
        }
        try {
            if (heap == null) {
                heap = JvmHeapProbe.attach(pid);
            }
            return heap;
        } catch (IOException | RuntimeException e) {
            failed(e);
            return null;
        }
    }

    private void failed(Exception e) {
        heapFailed = true;
        out.println("soak: cannot read the target's heap (" + e + "): it reads null from now on");
    }

    @Override
    public void close() {
        if (heap != null) {
            heap.close();
        }
    }
}
