package dev.tandem.bench;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** What the benches need to start other JVMs and servers on loopback. */
final class BenchProcesses {
    /** Options that stay with this JVM: a debugger's port or a profiler's output file is this process's. */
    private static final List<String> AGENT_OPTIONS = List.of("-agentlib", "-agentpath", "-javaagent", "-Xrunjdwp");

    private BenchProcesses() {}

    /**
     * The command that runs {@code tandem} with these arguments in a new JVM: this JVM's java, options and
     * code, so both ends run the same. Run from the shaded jar, the child runs that jar ({@code -jar}), so
     * its manifest's {@code Add-Opens} apply there too (a {@code -cp} launch ignores them: Hazelcast then
     * warns and Netty zeroes every buffer it allocates); run from a class path (tests), the same class path.
     */
    static List<String> tandem(List<String> args) {
        return tandem(List.of(), args);
    }

    /** The same, with {@code extraOptions} for the child's JVM after this JVM's own. */
    static List<String> tandem(List<String> extraOptions, List<String> args) {
        String java = ProcessHandle.current()
                .info()
                .command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(inheritedOptions());
        command.addAll(extraOptions);
        command.addAll(launch(System.getProperty("java.class.path")));
        command.addAll(args);
        return command;
    }

    /** This JVM's options a child shares ({@link #inheritedOptions(List)}). */
    static List<String> inheritedOptions() {
        return inheritedOptions(ManagementFactory.getRuntimeMXBean().getInputArguments());
    }

    /**
     * This JVM's options a child should share: module flags ({@code --add-opens}, {@code --add-modules} for the
     * vector kernel), the collector, heap and system properties; not agents ({@link #AGENT_OPTIONS}).
     */
    static List<String> inheritedOptions(List<String> inputArguments) {
        return inputArguments.stream()
                .filter(option -> AGENT_OPTIONS.stream().noneMatch(option::startsWith))
                .toList();
    }

    /** {@code -jar JAR} when the class path is one jar (the shaded jar names its main class), else {@code -cp}. */
    static List<String> launch(String classPath) {
        if (classPath.endsWith(".jar") && !classPath.contains(File.pathSeparator)) {
            return List.of("-jar", classPath);
        }
        return List.of("-cp", classPath, "dev.tandem.Main");
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
