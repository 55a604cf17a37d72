package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Short prompts that arrived while a long one waited for its first token, and their TTFT in trace time. */
class ShortBehindLongTest {

    private static RequestResult request(int index, long arrivalMs, int promptTokens, double ttftWallMs, String error) {
        return new RequestResult(index, arrivalMs, promptTokens, 0, 10, ttftWallMs, new double[0], 0, "p", "d", error);
    }

    private static final List<RequestResult> RUN = List.of(
            // A long prompt waiting from 1,000 to 1,000 + 3 × 2,000 = 7,000 ms of trace time.
            request(0, 1_000, 90_000, 2_000, null),
            request(1, 500, 1_000, 100, null), // before it: not counted
            request(2, 1_000, 2_000, 10, null), // arrives with it: counted (30 ms)
            request(3, 6_999, 8_191, 1_000, null), // the last moment, just short: counted (3,000 ms)
            request(4, 7_000, 1_000, 100, null), // after its first token: not counted
            request(5, 3_000, 8_192, 100, null), // not short: not counted
            request(6, 3_000, 1_000, 5_000, "HTTP 500"), // failed: not counted
            request(7, 4_000, 500, 20, null), // counted (60 ms)
            // A failed long prompt holds nobody up as far as the figures go.
            request(8, 20_000, 70_000, 0, "no answer"),
            request(9, 20_001, 100, 50, null));

    @Test
    void countsTheShortPromptsThatArrivedDuringALongOnesWait() {
        ShortBehindLong.Figures f = ShortBehindLong.of(RUN, 3);
        assertEquals(3, f.count());
        assertEquals(60, f.ttftP50Ms(), 1e-9);
        assertEquals(3_000, f.ttftP99Ms(), 1e-9);
        assertEquals(3_000, f.ttftMaxMs(), 1e-9);
    }

    @Test
    void printsARowPerPolicyAndNothingWithoutLongPrompts() {
        PolicyResult withLong = new PolicyResult("default", 0, 0, 0, 0, 0, 0, 0, 0, 0, RUN, java.util.Map.of());
        PolicyResult shortOnly = new PolicyResult(
                "round-robin", 0, 0, 0, 0, 0, 0, 0, 0, 0, List.of(request(0, 0, 100, 10, null)), java.util.Map.of());
        String table = ShortBehindLong.table(List.of(withLong, shortOnly), 3);
        assertTrue(table.contains("default               3       60.0     3000.0     3000.0"), table);
        assertTrue(!table.contains("round-robin"), table);
        assertEquals("", ShortBehindLong.table(List.of(shortOnly), 3));
    }
}
