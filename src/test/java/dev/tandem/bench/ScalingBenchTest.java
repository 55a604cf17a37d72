package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.bench.trace.TraceRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@code bench scaling} sends and prints, without starting a cluster. */
class ScalingBenchTest {

    @Test
    void arrivalsArePoissonAtTheRateAndRepeatable() {
        List<TraceRequest> a = ScalingBench.arrivals(8, 8192, 256, 600, 34);
        assertEquals(8 * 600, a.size(), 8 * 600 * 0.05);
        assertEquals(a, ScalingBench.arrivals(8, 8192, 256, 600, 34), "same seed, same arrivals");
        for (int i = 1; i < a.size(); i++) {
            assertTrue(a.get(i).arrivalMs() >= a.get(i - 1).arrivalMs());
        }
        assertTrue(a.stream().allMatch(r -> r.inputLength() == 8192 && r.outputLength() == 256 && !r.hasPrefix()));
    }

    @Test
    void twiceTheRateIsTwiceTheArrivals() {
        double ratio = (double) ScalingBench.arrivals(16, 1, 1, 600, 7).size()
                / ScalingBench.arrivals(8, 1, 1, 600, 7).size();
        assertEquals(2, ratio, 0.1);
    }

    @Test
    void theTableHasAColumnForEveryFigure() {
        String table = ScalingBench.table(List.of(
                new ScalingBench.Row("base", 8, 256, 62_935, 1998, 26_995, 16.7, 4.06, 1.39, 4.56, 1.84, 2.72, 0, 43)));
        String[] lines = table.split("\n");
        assertEquals(3, lines.length);
        long columns = lines[0].chars().filter(c -> c == '|').count();
        assertEquals(columns, lines[1].chars().filter(c -> c == '|').count());
        assertEquals(columns, lines[2].chars().filter(c -> c == '|').count());
        assertTrue(lines[2].startsWith("| base | 8.0 | 256 | 62935 | 1998 | 26995 | 16.7 | 4.06 | 1.39 |"), lines[2]);
    }
}
