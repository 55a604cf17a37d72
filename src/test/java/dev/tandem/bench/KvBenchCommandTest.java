package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/** {@code tandem bench kv}: the summary's exact shape (other tools read it) and bad options refused at once. */
class KvBenchCommandTest {

    @Test
    void theSummaryHasExactlyTheDocumentedShape() {
        JsonObject summary = new KvBench.Result(
                        List.of(1, 16, 256),
                        Map.of(1, 100.04, 16, 400.0, 256, 512.26),
                        Map.of(1, 300.0, 16, 800.0, 256, 1000.0))
                .summary();
        assertEquals(Set.of("sizes_mib", "eventbus_mib_s", "raw_tcp_mib_s"), summary.fieldNames());
        assertEquals(new JsonArray().add(1).add(16).add(256), summary.getJsonArray("sizes_mib"));
        assertEquals(
                Set.of("1", "16", "256"),
                summary.getJsonObject("eventbus_mib_s").fieldNames());
        assertEquals(512.3, summary.getJsonObject("eventbus_mib_s").getDouble("256"));
        assertEquals(
                Set.of("1", "16", "256"), summary.getJsonObject("raw_tcp_mib_s").fieldNames());
    }

    /** With cluster TLS the event bus under mutual TLS sits next to the others, per size like them. */
    @Test
    void theMtlsPathJoinsTheSummaryWhenItRan() {
        JsonObject summary = new KvBench.Result(
                        List.of(1, 16),
                        Map.of(1, 100.0, 16, 400.0),
                        Map.of(1, 300.0, 16, 800.0),
                        Map.of(1, 90.0, 16, 350.04))
                .summary();
        assertEquals(
                Set.of("sizes_mib", "eventbus_mib_s", "raw_tcp_mib_s", "eventbus_mtls_mib_s"), summary.fieldNames());
        assertEquals(350.0, summary.getJsonObject("eventbus_mtls_mib_s").getDouble("16"));
    }

    @ParameterizedTest(name = "{0} MiB, repeats {1}, at least {2} MiB: {3} transfers")
    @CsvSource({
        "1, 5, 512, 512",
        "16, 5, 512, 32",
        "64, 5, 512, 8",
        "256, 5, 512, 5",
        "300, 5, 512, 5",
        "100, 5, 512, 6",
        "16, 50, 512, 50",
        "16, 5, 0, 5",
    })
    void smallSizesRepeatUntilTheyCarryTheMinimum(int sizeMib, int repeats, int minMib, int expected) {
        assertEquals(expected, KvBench.transfers(sizeMib, repeats, minMib));
    }

    static Stream<List<String>> badRuns() {
        return Stream.of(
                List.of("--sizes", "0"),
                List.of("--sizes", "2048"),
                List.of("--repeats", "0"),
                List.of("--chunk-kib", "1"),
                List.of("--warmup-mib", "-1"),
                List.of("--min-mib", "-1"),
                List.of("--min-mib", "65537"),
                List.of("--cluster-tls-cert", "src/test/resources/tls/node.pem"),
                List.of(
                        "--cluster-tls-cert",
                        "src/test/resources/tls/node.pem",
                        "--cluster-tls-key",
                        "src/test/resources/tls/node-key.pem",
                        "--cluster-tls-ca",
                        "src/test/resources/tls/no-such-ca.pem"));
    }

    @ParameterizedTest
    @MethodSource("badRuns")
    void refusesBeforeStartingAnything(List<String> args) {
        StringWriter err = new StringWriter();
        int code = new CommandLine(new KvBenchCommand())
                .setErr(new PrintWriter(err, true))
                .execute(args.toArray(String[]::new));
        assertEquals(2, code, err.toString());
        assertTrue(err.toString().startsWith("tandem bench kv: "), err.toString());
    }
}
