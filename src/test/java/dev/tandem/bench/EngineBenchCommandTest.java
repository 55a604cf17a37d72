package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.reference.Llama2cCheckpointWriter;
import dev.tandem.engine.reference.ReferenceEngine;
import io.vertx.core.json.JsonObject;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/**
 * {@code tandem bench engine}: the summary's exact shape (other tools read it), a real run on a small
 * checkpoint, and bad options refused with exit 2 and one line. No timing is asserted.
 */
class EngineBenchCommandTest {
    @TempDir
    static Path dir;

    @Test
    void theSummaryHasExactlyTheDocumentedShape() {
        JsonObject summary = new EngineBench.Result("m", 301.26, Map.of(4, 1000.04, 16, 1250.0, 64, 1500.55)).summary();
        assertEquals(Set.of("model", "single_tokens_per_s", "batch_tokens_per_s"), summary.fieldNames());
        assertEquals("m", summary.getString("model"));
        assertEquals(301.3, summary.getDouble("single_tokens_per_s"));
        JsonObject batches = summary.getJsonObject("batch_tokens_per_s");
        assertEquals(Set.of("4", "16", "64"), batches.fieldNames());
        assertEquals(1500.6, batches.getDouble("64"));
    }

    @Test
    void aRunOnACheckpointWritesItsSummary() throws Exception {
        Path checkpoint = dir.resolve("tiny.bin");
        Llama2cCheckpointWriter.write(checkpoint, ReferenceEngine.builtinWeights());
        Path out = dir.resolve("out");
        StringWriter err = new StringWriter();
        int code = new CommandLine(new EngineBenchCommand())
                .setErr(new PrintWriter(err, true))
                .execute(
                        "--model", checkpoint.toString(), "--batches", "2,3", "--tokens", "5", "--out", out.toString());
        assertEquals(0, code, err.toString());
        JsonObject summary = new JsonObject(Files.readString(out.resolve("summary.json")));
        assertEquals("tiny", summary.getString("model"));
        assertTrue(summary.getDouble("single_tokens_per_s") > 0, summary.encode());
        assertEquals(
                Set.of("2", "3"), summary.getJsonObject("batch_tokens_per_s").fieldNames());
    }

    /** Each figure is the median of its runs, and the runs are printed beside it. */
    @Test
    void eachFigureIsTheMedianOfItsRuns() {
        var bytes = new java.io.ByteArrayOutputStream();
        EngineBench.Result result = new EngineBench(ReferenceEngine.builtin(16), 4, 3)
                .run(List.of(2), new java.io.PrintStream(bytes, true, java.nio.charset.StandardCharsets.UTF_8));
        String printed = bytes.toString(java.nio.charset.StandardCharsets.UTF_8);
        var line = java.util.regex.Pattern.compile(
                "\\s+(1 stream|batch of 2)\\s+([0-9.]+) tokens/s\\s+\\(runs: ([0-9., ]+)\\)");
        var m = line.matcher(printed);
        int lines = 0;
        while (m.find()) {
            lines++;
            double[] runs = java.util.Arrays.stream(m.group(3).split(", "))
                    .mapToDouble(Double::parseDouble)
                    .sorted()
                    .toArray();
            assertEquals(3, runs.length, printed);
            assertEquals(runs[1], Double.parseDouble(m.group(2)), printed);
            double reported = m.group(1).equals("1 stream")
                    ? result.singleTokensPerSecond()
                    : result.batchTokensPerSecond().get(2);
            assertEquals(runs[1], reported, 0.051, printed);
        }
        assertEquals(2, lines, printed);
    }

    static Stream<Arguments> badRuns() {
        return Stream.of(
                Arguments.of(List.of(), "--model"),
                Arguments.of(List.of("--model", dir.resolve("missing.bin").toString()), "no such file"),
                Arguments.of(List.of("--model", "x.bin", "--tokens", "0"), "--tokens"),
                Arguments.of(List.of("--model", "x.bin", "--repeat", "0"), "--repeat"),
                Arguments.of(List.of("--model", "x.bin", "--batches", "4,0"), "batch size"));
    }

    @ParameterizedTest
    @MethodSource("badRuns")
    void refusesWithOneClearLine(List<String> args, String says) {
        StringWriter err = new StringWriter();
        int code = new CommandLine(new EngineBenchCommand())
                .setErr(new PrintWriter(err, true))
                .execute(args.toArray(String[]::new));
        assertEquals(2, code, err.toString());
        assertTrue(err.toString().startsWith("tandem bench engine: "), err.toString());
        assertTrue(err.toString().contains(says), err.toString());
    }
}
