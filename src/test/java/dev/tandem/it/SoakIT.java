package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tandem bench soak} as a user runs it, from the jar: two 5-second "minutes" against the embedded
 * {@code tandem all} it starts as a child JVM. Every kind of traffic is sent and none fails; the bench read
 * the child's heap after GC (through the attach API), its /proc and its GC log; the files have their rows;
 * the child is gone afterwards.
 */
class SoakIT {
    private static final List<String> KINDS =
            List.of("sse_completion", "json_completion", "sse_chat", "json_chat", "ws_completion", "ws_chat");

    @Test
    void aShortSoakAgainstTheEmbeddedChild(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("soak");
        Path console = dir.resolve("console.txt");
        Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx256m",
                        "-jar",
                        TandemProcess.JAR.toAbsolutePath().toString(),
                        "bench",
                        "soak",
                        "--minutes",
                        "2",
                        "--rate",
                        "8",
                        "--out",
                        out.toString(),
                        "--seconds-per-minute",
                        "5",
                        "--warmup-seconds",
                        "2")
                .redirectErrorStream(true)
                .redirectOutput(console.toFile())
                .start();
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("bench soak did not finish in 180 s:\n" + read(console));
        }
        String output = read(console);
        assertEquals(0, p.exitValue(), output);
        assertTrue(output.contains("minute 1/2: ") && output.contains("minute 2/2: "), output);

        JsonObject summary = new JsonObject(Files.readString(out.resolve("summary.json")));
        JsonObject totals = summary.getJsonObject("totals");
        assertEquals(0, totals.getInteger("errors"), output);
        assertTrue(totals.getInteger("completed") > 0, output);
        assertTrue(totals.getInteger("cancelled") > 0, "cancels: " + output);
        for (String kind : KINDS) {
            assertTrue(totals.getJsonObject("sentByKind").getInteger(kind) > 0, kind + ": " + totals.encode());
        }
        JsonObject target = summary.getJsonObject("target");
        assertEquals("embedded", target.getString("kind"));
        assertTrue(target.getJsonArray("jvmOptions").contains("-Xmx256m"), "the child runs with the bench's options");

        JsonArray minutes = summary.getJsonArray("minutes");
        assertEquals(2, minutes.size());
        for (int i = 0; i < minutes.size(); i++) {
            JsonObject row = minutes.getJsonObject(i);
            assertTrue(row.getLong("heapAfterLastGcBytes") > 0, "heap after the target's last GC: " + row.encode());
            assertTrue(row.getLong("procRssBytes") > 0, row.encode());
            assertTrue(row.getLong("procFds") > 0, row.encode());
            assertTrue(row.getLong("rssBytes") > 0, "process_resident_memory_bytes: " + row.encode());
            assertTrue(row.getLong("openFiles") > 0, "process_files_open_files: " + row.encode());
        }
        assertNull(minutes.getJsonObject(0).getValue("heapAfterGcBytes"), "no full GC but at the baseline minute");
        assertTrue(minutes.getJsonObject(1).getLong("heapAfterGcBytes") > 0, "the baseline (the last minute of 2)");
        assertTrue(summary.getJsonObject("end").getLong("heapAfterGcBytes") > 0);
        JsonObject gc = summary.getJsonObject("gcPauses");
        assertNotNull(gc, "pauses from the child's GC log");
        assertTrue(gc.getInteger("explicitCount") >= 2, "a full GC at the baseline minute and the end: " + gc.encode());
        assertNotNull(summary.getJsonObject("checks").getValue("heapAfterGcEndOverMinute10"));

        assertEquals(3, Files.readAllLines(out.resolve("minutes.csv")).size());
        assertTrue(Files.readString(out.resolve("soak.svg")).startsWith("<svg"));
        assertTrue(Files.size(out.resolve("gc.log")) > 0);
        assertTrue(Files.readString(out.resolve("target.log")).contains("listening on http://127.0.0.1:"));
        long pid = target.getLong("pid");
        assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "the child is stopped");
    }

    private static String read(Path file) throws java.io.IOException {
        return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
    }
}
