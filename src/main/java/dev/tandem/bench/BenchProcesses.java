package dev.tandem.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** What the benches need to start other JVMs and servers on loopback. */
final class BenchProcesses {
    private BenchProcesses() {}

    /**
     * The command that runs {@code tandem} with these arguments in a new JVM: this JVM's java and class
     * path, so both ends run the same code (the shaded jar, or the test class path).
     */
    static List<String> tandem(List<String> args) {
        String java = ProcessHandle.current()
                .info()
                .command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command =
                new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"), "dev.tandem.Main"));
        command.addAll(args);
        return command;
    }

    /** A loopback port free right now (a small race with whoever takes it next is accepted). */
    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Stops processes the bench started: SIGTERM to each and its children (a graceful stop: JVMs leave
     * their cluster), then a kill for whatever is still running after {@code graceSeconds}.
     */
    static void stop(List<Process> processes, long graceSeconds) {
        for (Process p : processes) {
            p.descendants().forEach(ProcessHandle::destroy);
            p.destroy();
        }
        for (Process p : processes) {
            try {
                if (!p.waitFor(graceSeconds, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
        }
    }
}
