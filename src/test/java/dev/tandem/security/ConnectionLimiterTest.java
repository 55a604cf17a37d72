package dev.tandem.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.ConnectionLimits;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Connection limits per surface and per client address (issue 33): who is admitted, why not, places given back. */
class ConnectionLimiterTest {

    static Stream<Arguments> cases() {
        return Stream.of(
                // limits, the addresses that connect in order, which are refused (by index), the refusal's key
                Arguments.of(new ConnectionLimits(0, 0), List.of("a", "a", "a", "b"), List.of(), ""),
                Arguments.of(new ConnectionLimits(3, 0), List.of("a", "b", "c", "d"), List.of(3), "max-connections"),
                Arguments.of(
                        new ConnectionLimits(0, 2),
                        List.of("a", "a", "a", "b", "b", "b"),
                        List.of(2, 5),
                        "max-connections-per-address"),
                // A refusal by address takes no place of the total: b still gets in under max 3.
                Arguments.of(new ConnectionLimits(3, 1), List.of("a", "a", "b", "c", "d"), List.of(1, 4), "http."));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("cases")
    void admitsWhatTheLimitsAllow(ConnectionLimits limits, List<String> addresses, List<Integer> refused, String why) {
        ConnectionLimiter limiter = new ConnectionLimiter("http", limits);
        List<Integer> actual = new ArrayList<>();
        List<String> admitted = new ArrayList<>();
        for (int i = 0; i < addresses.size(); i++) {
            String refusal = limiter.admit(addresses.get(i));
            if (refusal == null) {
                admitted.add(addresses.get(i));
            } else {
                actual.add(i);
                assertTrue(refusal.contains(why), refusal);
            }
        }
        assertEquals(refused, actual);
        assertEquals(admitted.size(), limiter.open());
        admitted.forEach(limiter::release);
        assertEquals(0, limiter.open(), "every place given back");
        assertEquals(0, limiter.addresses(), "no address remembered once its connections closed");
    }
}
