package dev.tandem.bridge.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The per-address window, on a clock the test drives. Each case is a script of steps, one a line:
 * {@code <ms> fail <address> <outcome>}, {@code <ms> wait <address> <retry-after ms>} or
 * {@code <ms> size <addresses held>}.
 */
class FailedJoinLimiterTest {
    record Case(String name, int maxFailures, long windowMs, int maxAddresses, List<String> steps) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case(
                        "fewer failures than the limit leave the address heard",
                        3,
                        1000,
                        100,
                        List.of("0 fail a FIRST", "10 fail a COUNTED", "20 wait a 0")),
                new Case(
                        "the limit refuses the address until the window, opened by its first failure, closes",
                        3,
                        1000,
                        100,
                        List.of(
                                "0 wait a 0",
                                "0 fail a FIRST",
                                "100 fail a COUNTED",
                                "200 fail a LOCKED",
                                "200 wait a 800",
                                "999 wait a 1",
                                "1000 wait a 0")),
                new Case(
                        "after the window the count starts over",
                        2,
                        1000,
                        100,
                        List.of("0 fail a FIRST", "500 fail a LOCKED", "1000 fail a FIRST", "1500 wait a 0")),
                new Case(
                        "failures spread wider than the window never lock",
                        2,
                        1000,
                        100,
                        List.of("0 fail a FIRST", "1000 fail a FIRST", "2000 fail a FIRST", "2000 wait a 0")),
                new Case(
                        "addresses are counted apart",
                        2,
                        1000,
                        100,
                        List.of(
                                "0 fail a FIRST",
                                "1 fail a LOCKED",
                                "2 wait a 998",
                                "2 wait b 0",
                                "3 fail b FIRST",
                                "4 wait b 0")),
                new Case(
                        "a limit of one locks at the first failure",
                        1,
                        1000,
                        100,
                        List.of("0 fail a LOCKED", "0 wait a 1000")),
                new Case(
                        "at most maxAddresses are held: the oldest window goes first",
                        1,
                        1000,
                        2,
                        List.of(
                                "0 fail a LOCKED",
                                "1 fail b LOCKED",
                                "2 fail c LOCKED",
                                "2 size 2",
                                "3 wait a 0",
                                "3 wait b 998",
                                "3 wait c 999")),
                new Case(
                        "a flood of addresses stays within the bound",
                        5,
                        60_000,
                        3,
                        List.of(
                                "0 fail a FIRST",
                                "1 fail b FIRST",
                                "2 fail c FIRST",
                                "3 fail d FIRST",
                                "4 fail e FIRST",
                                "5 size 3")),
                new Case(
                        "entries expire with their window",
                        3,
                        1000,
                        100,
                        List.of("0 fail a FIRST", "500 fail b FIRST", "999 size 2", "1000 size 1", "1500 size 0")),
                new Case(
                        "a failure after the lock (a join already being checked) keeps the lock's end",
                        2,
                        1000,
                        100,
                        List.of("0 fail a FIRST", "1 fail a LOCKED", "2 fail a COUNTED", "2 wait a 998")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void followsTheScript(Case c) {
        long[] now = {0};
        FailedJoinLimiter limiter =
                new FailedJoinLimiter(c.maxFailures(), c.windowMs(), c.maxAddresses(), () -> now[0]);
        for (String step : c.steps()) {
            String[] w = step.split(" ");
            now[0] = Long.parseLong(w[0]);
            switch (w[1]) {
                case "fail" -> assertEquals(FailedJoinLimiter.Outcome.valueOf(w[3]), limiter.recordFailure(w[2]), step);
                case "wait" -> assertEquals(Long.parseLong(w[3]), limiter.retryAfterMs(w[2]), step);
                case "size" -> assertEquals(Integer.parseInt(w[2]), limiter.addresses(), step);
                default -> throw new IllegalArgumentException(step);
            }
        }
    }
}
