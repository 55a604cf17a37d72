package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A short soak against a Tandem in this JVM, given as {@code --target}: every kind of traffic goes out and
 * comes back without an error, and the files have their rows. What only the embedded child has (heap after
 * GC, /proc, the GC log) is null here; {@code SoakIT} runs that from the jar. No timing is asserted.
 */
class SoakBenchTest {
    @TempDir
    Path dir;

    @Test
    void twoShortMinutesOfMixedTrafficAgainstATarget() throws Exception {
        TandemNode node = TestNodes.startEmbedded(TestNodes.config(), 2, 2);
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        JsonObject summary;
        try {
            SoakBench.Options o = new SoakBench.Options(
                    2,
                    12,
                    URI.create("http://127.0.0.1:" + node.router().httpPort()),
                    dir,
                    512,
                    30,
                    42,
                    1,
                    true,
                    "",
                    "",
                    4,
                    2);
            summary = SoakBench.run(o, new PrintStream(console, true, StandardCharsets.UTF_8));
        } finally {
            node.close().await();
        }
        String out = console.toString(StandardCharsets.UTF_8);
        JsonObject totals = summary.getJsonObject("totals");
        assertEquals(0, totals.getInteger("errors"), out + totals.encodePrettily());
        assertTrue(totals.getInteger("completed") > 0, out);
        assertTrue(totals.getInteger("cancelled") > 0, "cancels: " + out);
        JsonObject sent = totals.getJsonObject("sentByKind");
        for (SoakKind k : SoakKind.values()) {
            assertTrue(sent.getInteger(k.key()) > 0, k + " sent: " + sent.encode());
        }
        assertEquals("remote", summary.getJsonObject("target").getString("kind"));
        assertEquals("tandem-builtin", summary.getJsonObject("target").getString("model"));
        JsonArray minutes = summary.getJsonArray("minutes");
        assertEquals(2, minutes.size());
        for (int i = 0; i < 2; i++) {
            JsonObject row = minutes.getJsonObject(i);
            assertTrue(row.getInteger("requests") > 0, row.encode());
            assertTrue(row.getLong("threads") > 0, "read from the target's /metrics: " + row.encode());
            assertTrue(row.getLong("rssBytes") > 0, row.encode());
            assertNull(row.getValue("heapAfterGcBytes"), "no GC asked of a target the bench did not start");
            assertNull(row.getValue("procRssBytes"));
        }
        assertNull(summary.getValue("gcPauses"));
        JsonObject warmup = summary.getJsonObject("warmup");
        assertEquals(2, warmup.getInteger("seconds"));
        assertTrue(warmup.getInteger("requests") > 0, "the warm-up sent requests of its own: " + warmup.encode());
        int rows = minutes.getJsonObject(0).getInteger("requests")
                + minutes.getJsonObject(1).getInteger("requests");
        assertEquals(
                totals.getInteger("requests"), rows, "the warm-up's requests are in no minute and not in the totals");
        assertTrue(out.contains("minute 1/2: ") && out.contains("minute 2/2: "), out);
        assertEquals(summary, new JsonObject(Files.readString(dir.resolve("summary.json"))));
        List<String> csv = Files.readAllLines(dir.resolve("minutes.csv"));
        assertEquals(3, csv.size());
        assertEquals(SoakReportTest.CSV_HEADER, csv.get(0));
        assertTrue(Files.readString(dir.resolve("soak.svg")).startsWith("<svg"));
    }
}
