package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/** Bad options and bad traces stop the benchmark before any cluster starts: exit 2 and one clear line. */
class RouteBenchCommandTest {
    @TempDir
    static Path dir;

    static Stream<Arguments> badRuns() throws Exception {
        Path good = Files.writeString(
                dir.resolve("good.jsonl"),
                "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 2, \"hash_ids\": [1]}\n");
        Path bad = Files.writeString(
                dir.resolve("bad.jsonl"),
                "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 2, \"hash_ids\": [1]}\n"
                        + "{\"timestamp\": 5, \"input_length\": \"ten\", \"output_length\": 2, \"hash_ids\": [1]}\n");
        Path txt = Files.writeString(dir.resolve("t.txt"), "0,1,2\n");
        return Stream.of(
                Arguments.of(List.of("--trace", dir.resolve("missing.jsonl").toString()), "no such trace file"),
                Arguments.of(List.of("--trace", bad.toString()), "line 2"),
                Arguments.of(List.of("--trace", txt.toString()), ".jsonl"),
                Arguments.of(List.of("--trace", good.toString(), "--policies", "default,fastest"), "unknown policy"),
                Arguments.of(List.of("--trace", good.toString(), "--policies", "seed,seed"), "twice"),
                Arguments.of(List.of("--trace", good.toString(), "--routers", "0"), "--routers"),
                Arguments.of(List.of("--trace", good.toString(), "--prefill", "0"), "--prefill"),
                Arguments.of(List.of("--trace", good.toString(), "--time-scale", "0"), "--time-scale"),
                Arguments.of(List.of("--trace", good.toString(), "--profile", "tpu-v9"), "unknown --profile"),
                Arguments.of(List.of("--trace", good.toString(), "--max-requests", "-1"), "--max-requests"),
                Arguments.of(List.of("--trace", good.toString(), "--local-prefill-max-tokens", "-5"), "0 or more"),
                Arguments.of(List.of("--trace", good.toString(), "--tenants", "a:priority=1"), "--tenants: "),
                Arguments.of(List.of("--trace", good.toString(), "--fairness", "maybe"), "--fairness"),
                Arguments.of(List.of("--trace", good.toString(), "--warm-up", "-1"), "--warm-up"));
    }

    @ParameterizedTest
    @MethodSource("badRuns")
    void refusesWithOneClearLine(List<String> args, String says) throws Exception {
        Path out = dir.resolve("out-" + Math.abs(args.hashCode()));
        List<String> all = new ArrayList<>(args);
        all.addAll(List.of("--out", out.toString()));
        StringWriter err = new StringWriter();
        int code = new CommandLine(new RouteBenchCommand())
                .setErr(new PrintWriter(err, true))
                .execute(all.toArray(String[]::new));
        assertEquals(2, code, err.toString());
        assertTrue(err.toString().startsWith("tandem bench route: "), err.toString());
        assertTrue(err.toString().contains(says), err.toString());
        assertFalse(err.toString().contains("\tat "), "no stack trace: " + err);
        assertFalse(Files.exists(out.resolve("summary.json")));
    }
}
