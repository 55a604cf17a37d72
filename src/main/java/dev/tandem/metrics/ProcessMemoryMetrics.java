package dev.tandem.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code process_resident_memory_bytes}: the process's resident set (VmRSS of {@code /proc/self/status}),
 * the Prometheus client convention's name. The JVM's own meters see the heap and the pools it manages,
 * not what the process holds from the OS (thread stacks, direct buffers, code cache, malloc arenas);
 * a slow leak there shows only in RSS. Not registered where there is no {@code /proc} (not Linux).
 */
public final class ProcessMemoryMetrics implements MeterBinder {
    private final Path status;

    public ProcessMemoryMetrics() {
        this(Path.of("/proc/self/status"));
    }

    ProcessMemoryMetrics(Path status) {
        this.status = status;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (!Files.isReadable(status)) {
            return;
        }
        Gauge.builder("process.resident.memory", this, ProcessMemoryMetrics::residentBytes)
                .baseUnit("bytes")
                .description("resident set size of the process (VmRSS)")
                // Nothing else holds this binder, and a gauge holds its object weakly by default: it read NaN.
                .strongReference(true)
                .register(registry);
    }

    /** VmRSS in bytes, read at scrape time (a file of about 1.5 KB); NaN when it cannot be read. */
    double residentBytes() {
        try {
            return vmRssBytes(Files.readString(status));
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** The {@code VmRSS:  123456 kB} line of a {@code /proc/<pid>/status} text, in bytes; NaN without it. */
    public static double vmRssBytes(String statusText) {
        return statusField(statusText, "VmRSS:") * 1024;
    }

    /**
     * The number of a {@code Name:  value [kB]} line of a {@code /proc/<pid>/status} text (the unit is the
     * caller's to know); NaN without the line.
     */
    public static double statusField(String statusText, String name) {
        for (String line : statusText.split("\n")) {
            if (line.startsWith(name)) {
                String[] parts = line.substring(name.length()).trim().split("\\s+");
                return Double.parseDouble(parts[0]);
            }
        }
        return Double.NaN;
    }
}
