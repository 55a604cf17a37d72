package dev.tandem.bench.trace;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Well-formed Mooncake and Azure files read into the values they hold; the file-level rules. */
class TraceReaderTest {
    @TempDir
    Path dir;

    private Path write(String name, String content) throws IOException {
        return Files.writeString(dir.resolve(name), content);
    }

    @Test
    void readsMooncakeLinesRelativeToTheFirstTimestamp() throws IOException {
        Path file = write("mc.jsonl", """
                {"timestamp": 1000, "input_length": 1025, "output_length": 7, "hash_ids": [0, 1, 2]}
                {"timestamp": 1000, "input_length": 512, "output_length": 1, "hash_ids": [0], "extra": "ignored"}
                {"output_length": 300, "hash_ids": [0, 1, 9], "input_length": 1100, "timestamp": 4500}
                """);

        Trace trace = TraceReader.read(file, 0);

        assertEquals("mc.jsonl", trace.name());
        assertTrue(trace.hasPrefixes());
        assertEquals(
                List.of(
                        new TraceRequest(0, 1025, 7, new long[] {0, 1, 2}),
                        new TraceRequest(0, 512, 1, new long[] {0}),
                        new TraceRequest(3500, 1100, 300, new long[] {0, 1, 9})),
                trace.requests());
    }

    @Test
    void readsAzureRowsWithArrivalsInMillisecondsFromTheFirstRow() throws IOException {
        Path file = write("az.csv", """
                TIMESTAMP,ContextTokens,GeneratedTokens
                2023-11-16 18:15:46.6805900,374,44
                2023-11-16 18:15:50.9951690,396,109
                2023-11-16 18:15:50.9951690,2,1
                2023-11-16 19:15:46.6815900,14050,1000
                """);

        Trace trace = TraceReader.read(file, 0);

        assertEquals("az.csv", trace.name());
        assertFalse(trace.hasPrefixes());
        // 50.9951690 - 46.6805900 = 4.3145790 s -> 4314 ms (rounded down); one hour and 1 ms later -> 3,600,001.
        assertEquals(
                List.of(
                        new TraceRequest(0, 374, 44),
                        new TraceRequest(4314, 396, 109),
                        new TraceRequest(4314, 2, 1),
                        new TraceRequest(3_600_001, 14050, 1000)),
                trace.requests());
        assertArrayEquals(new long[0], trace.requests().get(0).hashIds());
    }

    @ParameterizedTest(name = "{0} -> {1} ms")
    @CsvSource(delimiter = '|', textBlock = """
            2023-11-16 23:59:59.9         | 0
            2023-11-16 23:59:59.9000001   | 0
            2023-11-16 23:59:59.901       | 1
            2023-11-17 00:00:00           | 100
            2023-11-17 00:00:00.100000000 | 200
            2023-11-18 00:00:00.1         | 86400200
            """)
    void azureTimestampsOfAnyPrecisionAcrossMidnight(String second, long expectedMs) throws IOException {
        Path file = write(
                "az.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 23:59:59.9,1,1\n" + second + ",1,1\n");

        assertEquals(expectedMs, TraceReader.read(file, 0).requests().get(1).arrivalMs());
    }

    @Test
    void skipsBlankLinesAnywhereAndReadsCrLf() throws IOException {
        String mc = "\n   \n{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [4]}\r\n"
                + "\t\r\n\n{\"timestamp\": 3, \"input_length\": 2, \"output_length\": 2, \"hash_ids\": [5]}\r\n\n\n";
        String az = "\n\nTIMESTAMP,ContextTokens,GeneratedTokens\r\n\r\n2023-11-16 18:15:46.68,5,6\r\n  \n"
                + "2023-11-16 18:15:46.69,7,8\r\n\n";

        assertEquals(
                List.of(new TraceRequest(0, 1, 1, new long[] {4}), new TraceRequest(3, 2, 2, new long[] {5})),
                TraceReader.read(write("mc.jsonl", mc), 0).requests());
        assertEquals(
                List.of(new TraceRequest(0, 5, 6), new TraceRequest(10, 7, 8)),
                TraceReader.read(write("az.csv", az), 0).requests());
    }

    /** A limit reads only the first requests, so a malformed line after them is never reached. */
    @ParameterizedTest(name = "maxRequests {0} -> {1} requests")
    @CsvSource({"1, 1", "2, 2", "3, 3", "4, 3", "0, 3", "-1, 3"})
    void honoursMaxRequests(int maxRequests, int expected) throws IOException {
        String mc = "";
        for (int i = 0; i < 3; i++) {
            mc += "{\"timestamp\": " + i + ", \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [" + i
                    + "]}\n\n";
        }
        String az = "TIMESTAMP,ContextTokens,GeneratedTokens\n" + "2023-11-16 18:15:46.6805900,1,1\n".repeat(3);
        String broken = expected < 3 ? "this line is never read\n" : "";

        List<TraceRequest> fromMc =
                TraceReader.read(write("mc.jsonl", mc + broken), maxRequests).requests();
        List<TraceRequest> fromAz =
                TraceReader.read(write("az.csv", az + broken), maxRequests).requests();

        assertEquals(expected, fromMc.size());
        assertEquals(expected - 1, fromMc.get(expected - 1).arrivalMs());
        assertEquals(expected, fromAz.size());
    }

    @ParameterizedTest
    @ValueSource(strings = {"t.jsonl", "t.json", "T.JSONL"})
    void jsonExtensionsAreMooncake(String name) throws IOException {
        Path file = write(name, "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0]}");

        assertTrue(TraceReader.read(file, 0).hasPrefixes());
    }

    static Stream<Arguments> withoutRequests() {
        return Stream.of(
                Arguments.of("empty.jsonl", ""),
                Arguments.of("blank.jsonl", "\n\n  \n"),
                Arguments.of("empty.csv", ""),
                Arguments.of("blank.csv", "\n \n"),
                Arguments.of("header-only.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n\n"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("withoutRequests")
    void aFileWithoutRequestsIsRefused(String name, String content) throws IOException {
        Path file = write(name, content);

        TraceFormatException e = assertThrows(TraceFormatException.class, () -> TraceReader.read(file, 0));

        assertEquals(file + ": no requests in the file", e.getMessage());
        assertEquals(0, e.line());
    }

    @Test
    void anUnknownExtensionNamesTheKnownOnes() throws IOException {
        Path file = write("trace.txt", "{}");

        TraceFormatException e = assertThrows(TraceFormatException.class, () -> TraceReader.read(file, 0));

        assertTrue(e.getMessage().startsWith(file.toString()), e.getMessage());
        for (String known : List.of(".jsonl", ".json", ".csv")) {
            assertTrue(e.getMessage().contains(known), e.getMessage());
        }
    }
}
