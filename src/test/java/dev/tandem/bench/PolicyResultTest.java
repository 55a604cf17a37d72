package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PolicyResultTest {

    private static RequestResult ok(int i, int prompt, int cached, int generated, double ttft, double... itl) {
        return new RequestResult(i, i * 100L, prompt, cached, generated, ttft, itl, ttft + 10, "p", "d", null);
    }

    @Test
    void figuresAreInTheTracesTimeAndErrorsCountApart() {
        List<RequestResult> requests = List.of(
                ok(0, 100, 0, 10, 5, 1, 2),
                ok(1, 100, 50, 10, 7, 3),
                ok(2, 200, 150, 20, 9),
                RequestResult.failed(3, 300, 400, 12, "HTTP 503: busy"));
        // 10 s of wall clock at 10x: 100 simulated seconds for 40 generated tokens.
        PolicyResult r = PolicyResult.of("default", requests, 10, 10, 1234, 2);
        assertEquals(200.0 / 400, r.hitRate(), 1e-12, "the failed request's prompt is left out");
        assertEquals(70, r.ttftP50Ms(), 1e-9);
        assertEquals(90, r.ttftP99Ms(), 1e-9);
        assertEquals(20, r.itlP50Ms(), 1e-9);
        assertEquals(30, r.itlP99Ms(), 1e-9);
        assertEquals(0.4, r.throughputTokensPerS(), 1e-12);
        assertEquals(1234, r.kvBytesMoved());
        assertEquals(2, r.localPrefills());
        assertEquals(1, r.errors());
    }

    @ParameterizedTest
    @CsvSource({"50, 5", "99, 10", "100, 10", "0, 1", "10, 1", "11, 2"})
    void percentilesAreNearestRank(double p, double expected) {
        Percentiles ten = new Percentiles(new double[] {10, 9, 8, 7, 6, 5, 4, 3, 2, 1, Double.NaN});
        assertEquals(expected, ten.at(p));
        assertEquals(10, ten.count(), "NaN (no first token) is no sample");
    }
}
