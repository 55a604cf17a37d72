package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class StopStringMatcherTest {

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("no stops pass everything", List.of(), List.of("ab", "cd"), "abcd", false),
                Arguments.of("stop inside one fragment", List.of("cd"), List.of("abcdef"), "ab", true),
                Arguments.of("stop across fragments", List.of("cde"), List.of("ab", "c", "d", "ef"), "ab", true),
                Arguments.of("stop at the very start", List.of("ab"), List.of("a", "bc"), "", true),
                Arguments.of("partial match released at the end", List.of("xyz"), List.of("ab", "xy"), "abxy", false),
                Arguments.of(
                        "partial match that fails goes on", List.of("xyz"), List.of("axy", "a", "b"), "axyab", false),
                Arguments.of("earliest of several stops wins", List.of("zz", "cd"), List.of("abcdzz"), "ab", true),
                Arguments.of("overlapping prefix", List.of("aab"), List.of("a", "a", "a", "b", "c"), "a", true),
                Arguments.of("unicode stop", List.of("→"), List.of("x→y"), "x", true),
                Arguments.of("nothing after a stop", List.of("b"), List.of("ab", "cd"), "a", true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void matches(String name, List<String> stops, List<String> fragments, String expected, boolean stopped) {
        StopStringMatcher m = new StopStringMatcher(stops);
        StringBuilder out = new StringBuilder();
        for (String f : fragments) {
            out.append(m.push(f));
        }
        out.append(m.flush());
        assertEquals(expected, out.toString());
        assertEquals(stopped, m.stopped());
    }
}
