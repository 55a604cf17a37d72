package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PrometheusTextTest {
    /** Lines of a real Tandem scrape. */
    private static final PrometheusText SCRAPE = new PrometheusText(String.join(
            "\n",
            "# HELP tandem_kv_cache_bytes KV kept for reuse (prefix cache or finished sequences' blocks)",
            "# TYPE tandem_kv_cache_bytes gauge",
            "tandem_kv_cache_bytes{worker=\"decode-1\"} 32768.0",
            "tandem_kv_cache_bytes{worker=\"decode-2\"} 8192.0",
            "tandem_kv_cache_bytes{worker=\"prefill-1\"} 24576.0",
            "tandem_kv_cache_blocks{worker=\"decode-1\"} 4.0",
            "jvm_memory_used_bytes{area=\"heap\",id=\"G1 Eden Space\"} 3145728.0",
            "jvm_memory_used_bytes{area=\"heap\",id=\"G1 Old Gen\"} 1.6413184E7",
            "jvm_memory_used_bytes{area=\"nonheap\",id=\"Metaspace\"} 4.6674816E7",
            "jvm_threads_live_threads 72.0",
            "jvm_threads_live_threads_extra 5.0",
            "process_resident_memory_bytes NaN",
            ""));

    @Test
    void sumsASeriesOverItsLabelsOrTheOnesWithALabel() {
        assertEquals(65536.0, SCRAPE.sum("tandem_kv_cache_bytes"));
        assertEquals(3145728.0 + 1.6413184E7, SCRAPE.sum("jvm_memory_used_bytes", "area=\"heap\""));
        assertEquals(72.0, SCRAPE.sum("jvm_threads_live_threads"), "not the longer name it prefixes");
    }

    @Test
    void aSeriesNotThereOrNotANumberIsUnknown() {
        assertTrue(Double.isNaN(SCRAPE.sum("tandem_worker_kv_used_bytes")));
        assertTrue(Double.isNaN(SCRAPE.sum("process_resident_memory_bytes")));
        assertTrue(Double.isNaN(new PrometheusText("").sum("jvm_threads_live_threads")));
    }
}
