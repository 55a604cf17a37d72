package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/** {@code tandem bench soak}'s options: defaults, and a bad one refused with one line before anything starts. */
class SoakCommandTest {
    @TempDir
    Path dir;

    private SoakCommand parse(String... args) {
        SoakCommand c = new SoakCommand();
        new CommandLine(c).parseArgs(args);
        return c;
    }

    @Test
    void theDocumentedCommandLineAndItsDefaults() throws Exception {
        SoakBench.Options o = parse("--minutes", "60", "--rate", "20", "--out", dir.toString())
                .options();
        assertEquals(60, o.minutes());
        assertEquals(20.0, o.rate());
        assertNull(o.target(), "no --target: the embedded child");
        assertEquals(512, o.maxInFlight());
        assertEquals(60, o.requestTimeoutS());
        assertEquals(42, o.seed());
        assertEquals(2, o.webSockets());
        assertFalse(o.gcEachMinute(), "a full GC at minute 10 and the end only");
        assertEquals(60, o.secondsPerMinute());
        assertEquals("", o.apiKey());
        assertEquals("", o.model());
    }

    @Test
    void theGcEachMinuteCanBeTurnedOff() throws Exception {
        String[] base = {"--minutes", "1", "--rate", "1", "--out", dir.toString()};
        assertFalse(parse(concat(base, "--gc-each-minute=false")).options().gcEachMinute());
        assertFalse(parse(concat(base, "--gc-each-minute", "false")).options().gcEachMinute());
        assertTrue(parse(concat(base, "--gc-each-minute")).options().gcEachMinute());
    }

    @Test
    void aTargetIsAnHttpUrl() throws Exception {
        SoakCommand c = parse("--minutes", "1", "--rate", "1", "--out", "x", "--target", "http://10.0.0.5:8080");
        assertNull(c.invalid());
        assertEquals(URI.create("http://10.0.0.5:8080"), c.options().target());
        assertEquals(
                new SoakEndpoint("10.0.0.5", 8080, ""),
                SoakEndpoint.of(c.options().target(), ""));
        assertEquals(80, SoakEndpoint.of(URI.create("http://router/"), "").port());
    }

    static Stream<Arguments> badRuns() {
        return Stream.of(
                Arguments.of(List.of("--minutes", "0", "--rate", "5"), "--minutes must be 1 to 10080"),
                Arguments.of(List.of("--minutes", "10081", "--rate", "5"), "--minutes must be 1 to 10080"),
                Arguments.of(List.of("--minutes", "1", "--rate", "0"), "--rate must be above 0"),
                Arguments.of(List.of("--minutes", "1", "--rate", "NaN"), "--rate must be above 0"),
                Arguments.of(List.of("--minutes", "1", "--rate", "-3"), "--rate must be above 0"),
                Arguments.of(List.of("--minutes", "1", "--rate", "5", "--target", "https://x:1"), "http://host:port"),
                Arguments.of(
                        List.of("--minutes", "1", "--rate", "5", "--target", "localhost:8080"), "http://host:port"),
                Arguments.of(
                        List.of("--minutes", "1", "--rate", "5", "--target", "http://x:1/v1/completions"),
                        "takes no path"),
                Arguments.of(List.of("--minutes", "1", "--rate", "5", "--max-in-flight", "0"), "--max-in-flight"),
                Arguments.of(
                        List.of("--minutes", "1", "--rate", "5", "--request-timeout-s", "0"), "--request-timeout-s"),
                Arguments.of(List.of("--minutes", "1", "--rate", "5", "--websockets", "0"), "--websockets"),
                Arguments.of(
                        List.of("--minutes", "1", "--rate", "5", "--seconds-per-minute", "61"),
                        "--seconds-per-minute"));
    }

    @ParameterizedTest
    @MethodSource("badRuns")
    void refusesWithOneClearLine(List<String> args, String says) {
        StringWriter err = new StringWriter();
        String[] all = Stream.concat(
                        args.stream(), Stream.of("--out", dir.resolve("never").toString()))
                .toArray(String[]::new);
        int code = new CommandLine(new SoakCommand())
                .setErr(new PrintWriter(err, true))
                .execute(all);
        assertEquals(2, code, err.toString());
        assertTrue(err.toString().startsWith("tandem bench soak: "), err.toString());
        assertTrue(err.toString().contains(says), err.toString());
        assertEquals(1, err.toString().strip().lines().count(), err.toString());
        assertFalse(dir.resolve("never").toFile().exists(), "refused before anything starts");
    }

    @Test
    void theRequiredOptionsAreRequired() {
        StringWriter err = new StringWriter();
        int code = new CommandLine(new SoakCommand())
                .setErr(new PrintWriter(err, true))
                .execute("--rate", "5", "--out", dir.toString());
        assertEquals(2, code);
        assertTrue(err.toString().contains("--minutes"), err.toString());
    }

    private static String[] concat(String[] a, String... b) {
        return Stream.concat(Stream.of(a), Stream.of(b)).toArray(String[]::new);
    }
}
