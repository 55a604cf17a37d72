package dev.tandem.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ThroughputTest {

    @Test
    void reportsThePriorUntilTheFirstJobThenReplacesIt() {
        Throughput t = Throughput.prefillTokens(10_000);
        assertEquals(10_000, t.perSecond());
        t.record(2_000, 1_000_000_000L); // 2,000 tokens in 1 s
        assertEquals(2_000, t.perSecond(), 1e-9);
    }

    @Test
    void laterJobsMoveTheAverageByTheirSize() {
        Throughput t = new Throughput(0, 512);
        assertEquals(0, t.perSecond());
        t.record(1_000, 1_000_000_000L);
        t.record(512, 128_000_000L); // 4,000/s with weight 0.2
        assertEquals(1_000 + 0.2 * 3_000, t.perSecond(), 1e-9);
        t.record(51.2, 12_800_000L); // 4,000/s with weight 0.02
        double expected = 1_600 + 0.02 * 2_400;
        assertEquals(expected, t.perSecond(), 1e-9);
        t.record(512 * 10, 1_000_000_000L); // a big job replaces no more than a span's share
        assertEquals(expected + 0.2 * (5_120 - expected), t.perSecond(), 1e-9);
    }

    @Test
    void ignoresEmptyOrUntimedJobsAndBadPriors() {
        Throughput t = new Throughput(Double.NaN, 1);
        t.record(0, 1_000);
        t.record(10, 0);
        t.record(-5, 1_000);
        assertEquals(0, t.perSecond());
        assertThrows(IllegalArgumentException.class, () -> new Throughput(1, 0));
    }
}
