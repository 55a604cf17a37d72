package dev.tandem.bench;

import dev.tandem.metrics.ProcessMemoryMetrics;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * A process as Linux sees it: resident set, threads and open descriptors from {@code /proc/<pid>}. The
 * soak reads its embedded target this way as a cross-check of what the target's own /metrics say. NaN
 * where {@code /proc} cannot be read (not Linux, the process gone).
 */
record ProcStatus(double rssBytes, double threads, double fds) {
    static final ProcStatus UNKNOWN = new ProcStatus(Double.NaN, Double.NaN, Double.NaN);

    static ProcStatus of(long pid) {
        return of(Path.of("/proc", Long.toString(pid)));
    }

    static ProcStatus of(Path proc) {
        try {
            String status = Files.readString(proc.resolve("status"));
            double fds;
            try (Stream<Path> open = Files.list(proc.resolve("fd"))) {
                fds = open.count();
            }
            return new ProcStatus(
                    ProcessMemoryMetrics.vmRssBytes(status), ProcessMemoryMetrics.statusField(status, "Threads:"), fds);
        } catch (IOException | RuntimeException e) {
            return UNKNOWN;
        }
    }
}
