package dev.tandem.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One Tandem JVM started from the shaded jar ({@code java -jar target/tandem.jar <mode> ...}), with its
 * stdout and stderr in a log file so a failing IT can show what the node said.
 */
public final class TandemProcess {
    /**
     * How long a wave of JVMs gets to print its start-up lines: one takes ~2 s alone, five at once on
     * 2 cores ~15 s, and over 50 s was seen while other builds shared the machine.
     */
    public static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    static final Path JAR = Path.of(System.getProperty("tandem.jar", "target/tandem.jar"));
    /**
     * Node JVM options after -Xmx256m -XX:+UseSerialGC. By default C1 only: it cuts a node's start-up CPU
     * by ~40% (3.1 s to 1.8 s), which matters with six JVMs on two cores, and changes no result (Java
     * floating point is strict). {@code -Dtandem.it.jvmArgs=} (empty) restores the full JIT.
     */
    private static final List<String> EXTRA_JVM_ARGS = java.util.Arrays.stream(
                    System.getProperty("tandem.it.jvmArgs", "-XX:TieredStopAtLevel=1")
                            .trim()
                            .split("\\s+"))
            .filter(a -> !a.isEmpty())
            .toList();

    private static final Pattern MEMBER =
            Pattern.compile("^Tandem node joined cluster '.*' \\(member \\[.*\\]:(\\d+)\\)$", Pattern.MULTILINE);
    private static final Pattern ROUTER =
            Pattern.compile("^  router (\\S+) listening on http://127\\.0\\.0\\.1:(\\d+)$", Pattern.MULTILINE);
    private static final Pattern WORKERS = Pattern.compile("^  workers: ", Pattern.MULTILINE);
    /**
     * With setpriv's parent-death signal the kernel SIGKILLs a node when its parent dies, even when the
     * IT JVM itself is SIGKILLed and no shutdown hook runs.
     */
    private static final boolean SETPRIV = Files.isExecutable(Path.of("/usr/bin/setpriv"));
    /**
     * The parent-death signal fires when the *thread* that spawned the child exits, so every child is
     * spawned by this one thread, which lives as long as the JVM.
     */
    private static final ExecutorService SPAWNER = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "tandem-it-spawner");
        t.setDaemon(true);
        return t;
    });

    private final String name;
    private final String mode;
    private final Path log;
    private final Process process;
    private String routerId;
    private int httpPort = -1;
    private int clusterPort = -1;

    private TandemProcess(String name, String mode, Path log, Process process) {
        this.name = name;
        this.mode = mode;
        this.log = log;
        this.process = process;
    }

    /** Spawns the JVM and returns at once; {@link #awaitReady} waits for its start-up lines. */
    public static TandemProcess launch(String name, String mode, List<String> args, Path logDir) {
        return launch(name, mode, args, logDir, java.util.Map.of());
    }

    /** As above, with environment variables of its own over the test JVM's. */
    public static TandemProcess launch(
            String name, String mode, List<String> args, Path logDir, java.util.Map<String, String> env) {
        if (!Files.isRegularFile(JAR)) {
            throw new AssertionError(
                    JAR.toAbsolutePath() + " is missing: run the ITs with 'mvn verify' (after package)");
        }
        Path log = logDir.resolve(name + ".log");
        List<String> command = new ArrayList<>();
        if (SETPRIV) {
            command.addAll(List.of("/usr/bin/setpriv", "--pdeathsig", "KILL"));
        }
        command.addAll(List.of(javaExecutable(), "-Xmx256m", "-XX:+UseSerialGC"));
        command.addAll(EXTRA_JVM_ARGS);
        command.addAll(List.of("-jar", JAR.toAbsolutePath().toString(), mode));
        command.addAll(args);
        try {
            Files.createDirectories(logDir);
            Files.writeString(log, "$ " + String.join(" ", command) + "\n");
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            builder.environment().putAll(env);
            return new TandemProcess(
                    name, mode, log, SPAWNER.submit(builder::start).get(10, TimeUnit.SECONDS));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new AssertionError("could not start " + name + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The JVM running the tests, so the nodes run on the same Java. */
    private static String javaExecutable() {
        return ProcessHandle.current()
                .info()
                .command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /**
     * Waits until the node printed its start-up lines (routers: the listening line; workers: the workers
     * line), failing with the log tail if it dies or the deadline passes.
     */
    public TandemProcess awaitReady(long deadlineNanos) {
        Pattern last = mode.equals("router") || mode.equals("all") ? ROUTER : WORKERS;
        while (true) {
            String out = readLog();
            Matcher member = MEMBER.matcher(out);
            Matcher ready = last.matcher(out);
            if (member.find() && ready.find()) {
                clusterPort = Integer.parseInt(member.group(1));
                if (last == ROUTER) {
                    routerId = ready.group(1);
                    httpPort = Integer.parseInt(ready.group(2));
                }
                return this;
            }
            if (!process.isAlive()) {
                throw new AssertionError(
                        name + " exited (code " + process.exitValue() + ") before it was ready\n" + logTail(40));
            }
            if (System.nanoTime() > deadlineNanos) {
                throw new AssertionError(name + " printed no start-up line in time\n" + logTail(40));
            }
            sleep(50);
        }
    }

    /** SIGKILL: no shutdown hook, no graceful cluster leave — what a crashed machine looks like. */
    public void kill9() {
        process.destroyForcibly();
        awaitExit(Duration.ofSeconds(10));
    }

    /** SIGTERM: the node's shutdown hook leaves the cluster; SIGKILL if it takes over 15 s. */
    public void stop() {
        process.destroy();
        if (!awaitExit(Duration.ofSeconds(15))) {
            kill9();
        }
    }

    /** Sends SIGKILL without waiting, so many nodes can be killed at once. */
    void killNoWait() {
        process.destroyForcibly();
    }

    boolean awaitExit(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The router's HTTP port; only for router and all modes, after {@link #awaitReady}. */
    public int httpPort() {
        if (httpPort < 0) {
            throw new IllegalStateException(name + " is not a ready router");
        }
        return httpPort;
    }

    public String routerId() {
        if (routerId == null) {
            throw new IllegalStateException(name + " is not a ready router");
        }
        return routerId;
    }

    /** The Hazelcast member port the node bound (after {@link #awaitReady}). */
    public int clusterPort() {
        return clusterPort;
    }

    public Path logFile() {
        return log;
    }

    /** The last {@code lines} lines of the node's output, headed by its name, for assertion messages. */
    public String logTail(int lines) {
        String[] all = readLog().split("\n", -1);
        int from = Math.max(0, all.length - lines);
        StringBuilder sb = new StringBuilder("--- ")
                .append(name)
                .append(" (pid ")
                .append(process.pid())
                .append(process.isAlive() ? ", alive" : ", exited")
                .append(") ")
                .append(log)
                .append('\n');
        for (int i = from; i < all.length; i++) {
            sb.append(all[i]).append('\n');
        }
        return sb.toString();
    }

    private String readLog() {
        try {
            // Lenient about bytes: a half-written multi-byte character must not fail a poll.
            return new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted");
        }
    }

    @Override
    public String toString() {
        return name + "(pid " + process.pid() + ")";
    }
}
