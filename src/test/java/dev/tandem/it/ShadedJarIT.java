package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded jar run as the README runs it ({@code java -jar target/tandem.jar}): its manifest opens what
 * Hazelcast and Netty need, and Netty then allocates its buffers without zeroing them. Without the
 * manifest's {@code java.base/jdk.internal.misc} or Main's Netty property, Netty reports the allocation
 * unavailable and the first test fails.
 */
class ShadedJarIT {
    @Test
    void nettyAllocatesWithoutZeroingInTheJar(@TempDir Path dir) throws Exception {
        Path logging = dir.resolve("logging.properties");
        Files.writeString(
                logging,
                String.join(
                        "\n",
                        "handlers=java.util.logging.ConsoleHandler",
                        "java.util.logging.ConsoleHandler.level=ALL",
                        ".level=WARNING",
                        "io.netty.util.internal.PlatformDependent0.level=FINE",
                        ""));
        // The smallest run that loads Netty in this JVM and starts a second one with the same options.
        String output = benchKv(dir, List.of("-Djava.util.logging.config.file=" + logging), 0);
        assertTrue(output.contains("allocateUninitializedArray(int): available"), output);
    }

    /**
     * The peer JVM runs with the bench's options, so {@code -Xlog:gc} logs to its standard output too. Unread
     * after READY, that pipe filled within a 256 MiB warm-up and the peer stopped: the transfer timed out.
     */
    @Test
    void aPeerThatLogsALotDoesNotStallTheBench(@TempDir Path dir) throws Exception {
        benchKv(dir, List.of("-Xlog:gc*=debug"), 256);
    }

    /** Runs {@code bench kv} over 1 MiB once from the jar; returns its output after checking it measured. */
    private static String benchKv(Path dir, List<String> jvmOptions, int warmupMib) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        command.addAll(jvmOptions);
        command.addAll(List.of(
                "-jar",
                TandemProcess.JAR.toAbsolutePath().toString(),
                "bench",
                "kv",
                "--sizes",
                "1",
                "--repeats",
                "1",
                "--min-mib",
                "0",
                "--warmup-mib",
                Integer.toString(warmupMib)));
        Path out = dir.resolve("out.txt");
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        if (!p.waitFor(150, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("bench kv did not finish in 150 s:\n" + tail(read(out)));
        }
        String output = read(out);
        assertEquals(0, p.exitValue(), tail(output));
        assertTrue(output.lines().anyMatch(l -> l.matches("^ +1 +1 +[0-9.]+ +[0-9.]+ +[0-9]+%$")), tail(output));
        return output;
    }

    /** The end of a long output (GC logs run to megabytes). */
    private static String tail(String output) {
        return output.length() <= 4000 ? output : output.substring(output.length() - 4000);
    }

    @Test
    void theManifestNamesTheMainClassAndTheOpens() throws IOException {
        try (JarFile jar = new JarFile(TandemProcess.JAR.toFile())) {
            var attributes = jar.getManifest().getMainAttributes();
            assertEquals("dev.tandem.Main", attributes.getValue("Main-Class"));
            List<String> opens = List.of(attributes.getValue("Add-Opens").split(" "));
            assertTrue(
                    opens.containsAll(List.of("java.base/java.lang", "java.base/jdk.internal.misc")), opens.toString());
        }
    }

    private static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }
}
