package dev.tandem.bridge.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * At most so many lines per interval, on a clock the test drives. Each step is {@code <ms> <expected>}:
 * -1 when the line is held back, else how many were held back before it.
 */
class LogThrottleTest {
    record Case(String name, int lines, long intervalMs, List<String> steps) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("lines under the limit all pass", 3, 1000, List.of("0 0", "1 0", "2 0")),
                new Case("past the limit lines are held back", 2, 1000, List.of("0 0", "1 0", "2 -1", "999 -1")),
                new Case(
                        "the next interval's first line says how many were held back",
                        1,
                        1000,
                        List.of("0 0", "10 -1", "20 -1", "1000 2", "1001 -1", "2500 1", "2600 -1")),
                new Case(
                        "a quiet stretch starts a fresh interval",
                        2,
                        1000,
                        List.of("0 0", "1 0", "5000 0", "5001 0", "5002 -1")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void followsTheScript(Case c) {
        long[] now = {0};
        LogThrottle throttle = new LogThrottle(c.lines(), c.intervalMs(), () -> now[0]);
        for (String step : c.steps()) {
            String[] w = step.split(" ");
            now[0] = Long.parseLong(w[0]);
            assertEquals(Long.parseLong(w[1]), throttle.admit(), step);
        }
    }
}
