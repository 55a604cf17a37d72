package dev.tandem.bench.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every kind of malformed line is refused with the file, its 1-based line number (blank lines count) and
 * what is wrong. Each row puts one bad line after a good line and a blank one, so it sits on line 3.
 */
class TraceReaderMalformedTest {
    private static final String GOOD_MOONCAKE =
            "{\"timestamp\": 100, \"input_length\": 1025, \"output_length\": 5, \"hash_ids\": [0, 1, 2]}";
    private static final String AZURE_HEADER = "TIMESTAMP,ContextTokens,GeneratedTokens";
    private static final String GOOD_AZURE = "2023-11-16 18:15:46.6805900,374,44";

    @TempDir
    Path dir;

    /** {@code bad} is the third line; {@code problem} a fragment of what the message must say. */
    record Case(String label, String bad, String problem) {
        @Override
        public String toString() {
            return label;
        }
    }

    static Stream<Case> mooncake() {
        return Stream.of(
                new Case("not JSON", "{\"timestamp\": 100, \"input_length\"", "not a JSON object"),
                new Case("JSON but not an object", "[100, 1025, 5]", "not a JSON object"),
                new Case("trailing garbage", GOOD_MOONCAKE + " x", "not a JSON object"),
                new Case(
                        "missing timestamp",
                        "{\"input_length\": 10, \"output_length\": 5, \"hash_ids\": [0]}",
                        "missing field 'timestamp'"),
                new Case(
                        "missing input_length",
                        "{\"timestamp\": 100, \"output_length\": 5, \"hash_ids\": [0]}",
                        "missing field 'input_length'"),
                new Case(
                        "missing output_length",
                        "{\"timestamp\": 100, \"input_length\": 10, \"hash_ids\": [0]}",
                        "missing field 'output_length'"),
                new Case(
                        "missing hash_ids",
                        "{\"timestamp\": 100, \"input_length\": 10, \"output_length\": 5}",
                        "missing field 'hash_ids'"),
                new Case("null field", mooncake("null", "10", "5", "[0]"), "field 'timestamp' is null"),
                new Case(
                        "string length",
                        mooncake("100", "\"10\"", "5", "[0]"),
                        "field 'input_length' must be an integer, got the string \"10\""),
                new Case(
                        "float length",
                        mooncake("100", "10", "5.5", "[0]"),
                        "field 'output_length' must be an integer, got 5.5"),
                new Case(
                        "float timestamp",
                        mooncake("100.0", "10", "5", "[0]"),
                        "field 'timestamp' must be an integer, got 100.0"),
                new Case(
                        "length beyond an int",
                        mooncake("100", "3000000000", "5", "[0]"),
                        "field 'input_length' must be positive and fit an int, got 3000000000"),
                new Case(
                        "timestamp beyond 64 bits",
                        mooncake("99999999999999999999", "10", "5", "[0]"),
                        "field 'timestamp' must be an integer, got 99999999999999999999, beyond 64 bits"),
                new Case(
                        "zero input_length",
                        mooncake("100", "0", "5", "[]"),
                        "field 'input_length' must be positive and fit an int, got 0"),
                new Case(
                        "negative output_length",
                        mooncake("100", "10", "-5", "[0]"),
                        "field 'output_length' must be positive and fit an int, got -5"),
                new Case(
                        "negative timestamp",
                        mooncake("-1", "10", "5", "[0]"),
                        "field 'timestamp' must be non-negative, got -1"),
                new Case(
                        "hash_ids not an array",
                        mooncake("100", "10", "5", "0"),
                        "field 'hash_ids' must be an array of integers, got 0"),
                new Case(
                        "string hash id",
                        mooncake("100", "1025", "5", "[0, \"1\", 2]"),
                        "hash_ids[1] must be an integer, got the string \"1\""),
                new Case(
                        "float hash id",
                        mooncake("100", "1025", "5", "[0, 1, 2.5]"),
                        "hash_ids[2] must be an integer, got 2.5"),
                new Case("negative hash id", mooncake("100", "1025", "5", "[0, -1, 2]"), "hash_ids[1] is negative: -1"),
                new Case(
                        "too few hash ids",
                        mooncake("100", "1025", "5", "[0, 1]"),
                        "field 'hash_ids' has 2 ids but input_length 1025 spans 3 blocks of 512 tokens"),
                new Case(
                        "too many hash ids",
                        mooncake("100", "1024", "5", "[0, 1, 2]"),
                        "field 'hash_ids' has 3 ids but input_length 1024 spans 2 blocks of 512 tokens"),
                new Case(
                        "no hash ids",
                        mooncake("100", "10", "5", "[]"),
                        "field 'hash_ids' has 0 ids but input_length 10 spans 1 blocks"),
                new Case(
                        "timestamp going backwards",
                        mooncake("99", "10", "5", "[0]"),
                        "timestamp 99 is earlier than the previous request's (100)"));
    }

    static Stream<Case> azure() {
        return Stream.of(
                new Case("too few columns", "2023-11-16 18:15:47.0,374", "expected 3 columns"),
                new Case("too many columns", "2023-11-16 18:15:47.0,374,44,1", "expected 3 columns"),
                new Case("empty row", ",,", "unparsable TIMESTAMP ''"),
                new Case("timestamp not a date", "yesterday,374,44", "unparsable TIMESTAMP 'yesterday'"),
                new Case("month 13", "2023-13-16 18:15:47.0,374,44", "unparsable TIMESTAMP '2023-13-16 18:15:47.0'"),
                new Case(
                        "timestamp with a T",
                        "2023-11-16T18:15:47.0,374,44",
                        "unparsable TIMESTAMP '2023-11-16T18:15:47.0'"),
                new Case("too many fraction digits", "2023-11-16 18:15:47.0123456789,374,44", "unparsable TIMESTAMP"),
                new Case(
                        "string tokens",
                        "2023-11-16 18:15:47.0,many,44",
                        "ContextTokens must be an integer, got 'many'"),
                new Case(
                        "float tokens",
                        "2023-11-16 18:15:47.0,374,4.5",
                        "GeneratedTokens must be an integer, got '4.5'"),
                new Case(
                        "tokens beyond an int",
                        "2023-11-16 18:15:47.0,3000000000,44",
                        "ContextTokens must be positive and fit an int, got 3000000000"),
                new Case(
                        "zero context",
                        "2023-11-16 18:15:47.0,0,44",
                        "ContextTokens must be positive and fit an int, got 0"),
                new Case(
                        "negative generated",
                        "2023-11-16 18:15:47.0,374,-2",
                        "GeneratedTokens must be positive and fit an int, got -2"),
                new Case(
                        "timestamp going backwards",
                        "2023-11-16 18:15:46.6805899,374,44",
                        "timestamp 2023-11-16 18:15:46.6805899 is earlier than the previous request's"
                                + " (2023-11-16 18:15:46.6805900)"));
    }

    private static String mooncake(String timestamp, String input, String output, String hashIds) {
        return "{\"timestamp\": " + timestamp + ", \"input_length\": " + input + ", \"output_length\": " + output
                + ", \"hash_ids\": " + hashIds + "}";
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("mooncake")
    void mooncakeLineRefused(Case c) throws IOException {
        assertRefused("trace.jsonl", GOOD_MOONCAKE + "\n\n" + c.bad() + "\n" + GOOD_MOONCAKE + "\n", 3, c.problem());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("azure")
    void azureLineRefused(Case c) throws IOException {
        // The header is line 2 here, so the bad row is line 4.
        assertRefused("trace.csv", "\n" + AZURE_HEADER + "\n" + GOOD_AZURE + "\n" + c.bad() + "\n", 4, c.problem());
    }

    static Stream<Case> azureHeaders() {
        return Stream.of(
                new Case("no header", GOOD_AZURE, "expected the header " + AZURE_HEADER + ", got " + GOOD_AZURE),
                new Case("renamed column", "TIMESTAMP,InputTokens,GeneratedTokens", "expected the header"),
                new Case("missing column", "TIMESTAMP,ContextTokens", "expected the header"),
                new Case("extra column", AZURE_HEADER + ",Model", "expected the header"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("azureHeaders")
    void azureHeaderRefused(Case c) throws IOException {
        assertRefused("trace.csv", "\n\n" + c.bad() + "\n" + GOOD_AZURE + "\n", 3, c.problem());
    }

    private void assertRefused(String name, String content, int line, String problem) throws IOException {
        Path file = Files.writeString(dir.resolve(name), content);

        TraceFormatException e = assertThrows(TraceFormatException.class, () -> TraceReader.read(file, 0));

        assertEquals(line, e.line());
        assertEquals(file, e.file());
        String prefix = file + " line " + line + ": ";
        assertTrue(e.getMessage().startsWith(prefix), e.getMessage());
        assertTrue(e.getMessage().contains(problem), e.getMessage());
    }
}
