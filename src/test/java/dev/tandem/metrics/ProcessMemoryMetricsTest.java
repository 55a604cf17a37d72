package dev.tandem.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcessMemoryMetricsTest {
    /** Lines of a real /proc/<pid>/status (Linux 6.1, a Tandem JVM). */
    private static final String STATUS = String.join(
            "\n",
            "Name:\tjava",
            "Umask:\t0022",
            "State:\tS (sleeping)",
            "VmPeak:\t 5118604 kB",
            "VmSize:\t 5052044 kB",
            "VmHWM:\t  215392 kB",
            "VmRSS:\t  214216 kB",
            "RssAnon:\t  178032 kB",
            "Threads:\t87",
            "");

    @Test
    void readsVmRssInBytesAndOtherFieldsAsNumbers() {
        assertEquals(214216.0 * 1024, ProcessMemoryMetrics.vmRssBytes(STATUS));
        assertEquals(87.0, ProcessMemoryMetrics.statusField(STATUS, "Threads:"));
        assertTrue(Double.isNaN(ProcessMemoryMetrics.statusField(STATUS, "VmSwap:")));
    }

    @Test
    void theGaugeReadsTheFileAtScrapeTimeAndIsAbsentWithoutIt(@TempDir Path dir) throws Exception {
        Path status = dir.resolve("status");
        Files.writeString(status, STATUS);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new ProcessMemoryMetrics(status).bindTo(registry);
        assertEquals(
                214216.0 * 1024, registry.get("process.resident.memory").gauge().value());
        Files.writeString(status, STATUS.replace("214216", "300000"));
        assertEquals(
                300000.0 * 1024, registry.get("process.resident.memory").gauge().value());

        SimpleMeterRegistry none = new SimpleMeterRegistry();
        new ProcessMemoryMetrics(dir.resolve("missing")).bindTo(none);
        assertTrue(none.find("process.resident.memory").gauge() == null);
    }
}
