package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import org.junit.jupiter.api.Test;

class SoakChecksTest {
    private static TargetSample heapAndRss(double heap, double rss) {
        return new TargetSample(0, 0, 0, 0, 0, heap, 0, 0, 0, rss, 0, 0);
    }

    private static SoakMinute ttftP99(int minute, double p99, int errors) {
        EnumMap<SoakError, Integer> e = new EnumMap<>(SoakError.class);
        e.put(SoakError.TIMEOUT, errors);
        return new SoakMinute(minute, 10, 10, 0, e, 1, p99, 1, 1);
    }

    @Test
    void growthIsMeasuredFromMinuteTenToTheEnd() {
        List<TargetSample> samples = new ArrayList<>();
        List<SoakMinute> minutes = new ArrayList<>();
        for (int m = 1; m <= 30; m++) {
            samples.add(heapAndRss(m == 10 ? 40e6 : 1e6, m == 10 ? 400e6 : 1e6));
            minutes.add(ttftP99(m, 10, m == 20 ? 2 : 0));
        }
        SoakChecks c = SoakChecks.of(minutes, samples, heapAndRss(50e6, 440e6));
        assertEquals(10, c.baselineMinute());
        assertEquals(1.25, c.heapAfterGcEndOverMinute10(), 1e-9);
        assertEquals(1.1, c.rssEndOverMinute10(), 1e-9);
        assertEquals(2, c.errorsTotal());
    }

    @Test
    void aShortRunMeasuresFromItsLastMinute() {
        SoakChecks c = SoakChecks.of(
                List.of(ttftP99(1, 10, 0), ttftP99(2, 10, 0)),
                List.of(heapAndRss(10e6, 100e6), heapAndRss(20e6, 200e6)),
                heapAndRss(30e6, 300e6));
        assertEquals(2, c.baselineMinute());
        assertEquals(1.5, c.heapAfterGcEndOverMinute10(), 1e-9);
    }

    @Test
    void theWorstMinuteIsMeasuredAgainstTheMedianMinute() {
        List<SoakMinute> minutes = List.of(
                ttftP99(2, 10, 0),
                ttftP99(3, 30, 0),
                ttftP99(4, 12, 0),
                ttftP99(5, Double.NaN, 0), // no streamed request: left out
                ttftP99(6, 14, 0));
        SoakChecks c = SoakChecks.of(minutes, List.of(), TargetSample.UNKNOWN);
        assertEquals(30 / 13.0, c.maxMinuteTtftP99OverMedian(), 1e-9, "median of 10, 12, 14, 30 is 13");
        assertTrue(Double.isNaN(c.heapAfterGcEndOverMinute10()), "no samples: unknown, not 0");
        assertEquals(
                1.0,
                SoakChecks.of(List.of(ttftP99(1, 50, 0)), List.of(), TargetSample.UNKNOWN)
                        .maxMinuteTtftP99OverMedian());
    }

    @Test
    void aMissingHeapFigureLeavesItsRatioUnknown() {
        SoakChecks c = SoakChecks.of(
                List.of(ttftP99(1, 10, 0)), List.of(heapAndRss(Double.NaN, 100e6)), heapAndRss(30e6, 110e6));
        assertTrue(Double.isNaN(c.heapAfterGcEndOverMinute10()));
        assertEquals(1.1, c.rssEndOverMinute10(), 1e-9);
    }
}
