package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The pause parser on real {@code -Xlog:gc*:file=…:time,uptime,level,tags} logs of Java 17 (and one of Java 25):
 * {@code g1-jdk17} is the start of a soak target's log (young, concurrent-start, remark and cleanup pauses)
 * and one of the bench's per-minute {@code System.gc()}; {@code g1-full-jdk17} a 24 MB heap running out
 * (G1 Compaction full pauses); the others small programs that end with a {@code System.gc()}, their
 * {@code gc}, {@code gc,start} and {@code gc,phases} lines. The figures were counted from the files by hand
 * and a second script.
 */
class GcPausesTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        // file,                  count, total ms, p50,   p99,    max,    full, explicit, explicit ms
        "g1-jdk17,                6,     156.432,  18.539, 79.636, 79.636, 0,    1,        288.354",
        "g1-full-jdk17,           32,    97.515,   0.834,  14.713, 14.713, 3,    0,        0",
        "parallel-jdk17,          4,     100.477,  22.592, 43.195, 43.195, 0,    2,        38.414",
        "shenandoah-jdk17,        20,    1.0,      0.039,  0.09,   0.09,   0,    4,        0.28",
        "zgc-jdk17,               18,    0.281,    0.014,  0.03,   0.03,   0,    3,        0.033",
        "zgc-generational-jdk25,  15,    0.29,     0.018,  0.036,  0.036,  0,    8,        0.09",
    })
    void countsTheWorkloadsPausesApartFromTheCollectionsAskedFor(
            String file,
            int count,
            double totalMs,
            double p50,
            double p99,
            double max,
            int full,
            int explicit,
            double explicitMs)
            throws IOException {
        GcPauses p = GcPauses.parse(lines(file));
        assertEquals(count, p.count());
        assertEquals(totalMs, p.totalMs(), 1e-6);
        assertEquals(p50, p.p50Ms(), 1e-9);
        assertEquals(p99, p.p99Ms(), 1e-9);
        assertEquals(max, p.maxMs(), 1e-9);
        assertEquals(full, p.fullCount());
        assertEquals(explicit, p.explicitCount());
        assertEquals(explicitMs, p.explicitTotalMs(), 1e-6);
    }

    /** The {@code gc,start} line of a pause has no duration: counted once, from its end line. */
    @Test
    void aPauseIsCountedOnceAndSubPhasesAreNotPauses() {
        GcPauses p = GcPauses.parse(List.of(
                "[2026-12-04T16:44:39.925+0000][0.944s][info][gc,start    ] GC(0) Pause Young (Normal) (G1 Evacuation"
                        + " Pause)",
                "[2026-12-04T16:44:40.005+0000][1.024s][info][gc,phases   ] GC(0)   Evacuate Collection Set: 20.2ms",
                "[2026-12-04T16:44:40.005+0000][1.024s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation"
                        + " Pause) 19M->7M(388M) 79.636ms",
                "[2026-12-04T16:44:40.005+0000][1.024s][info][gc,cpu      ] GC(0) User=0.10s Sys=0.02s Real=0.08s"));
        assertEquals(1, p.count());
        assertEquals(79.636, p.maxMs());
    }

    @Test
    void pausesBeforeTheTrafficAreTheStartUpsNotTheWorkloads() {
        List<String> log = List.of(
                "[2026-12-04T18:50:18.687+0000][6.197s][info][gc          ] GC(16) Pause Young (Normal) (G1 Evacuation"
                        + " Pause) 1557M->1557M(4980M) 438.641ms",
                "[2026-12-04T18:50:19.757+0000][7.267s][info][gc          ] GC(17) Pause Full (System.gc())"
                        + " 1719M->1695M(4980M) 479.024ms",
                "[2026-12-04T18:51:00.001+0000][47.5s][info][gc          ] GC(18) Pause Young (Normal) (G1 Evacuation"
                        + " Pause) 2100M->1700M(4980M) 12.500ms");
        GcPauses p = GcPauses.parse(log, java.time.Instant.parse("2026-12-04T18:50:30Z"));
        assertEquals(1, p.count());
        assertEquals(12.5, p.maxMs());
        assertEquals(0, p.explicitCount(), "the reservation's collection came before the traffic");
        assertEquals(2, p.startupCount());
        assertEquals(917.665, p.startupTotalMs(), 1e-9);
        assertEquals(3, GcPauses.parse(log).count() + GcPauses.parse(log).explicitCount(), "no start: all counted");
    }

    @Test
    void anEmptyLogHasNoPausesAndNoPercentiles() {
        GcPauses p = GcPauses.parse(List.of());
        assertEquals(0, p.count());
        assertEquals(0.0, p.totalMs());
        assertTrue(Double.isNaN(p.p99Ms()));
    }

    private static List<String> lines(String name) throws IOException {
        try (InputStream in = GcPausesTest.class.getResourceAsStream("gc/" + name + ".log")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
    }
}
