package dev.tandem.bench;

import dev.tandem.cluster.LoopbackClusterPorts;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * What the soak drives: a {@code tandem all} the bench starts as a child JVM from its own jar (with its own
 * JVM options, so {@code java -Xmx1g -jar tandem.jar bench soak} soaks a 1 GiB Tandem), or a URL given
 * with {@code --target}. The child gets free loopback ports, no TCP bridge, a cluster of its own and a
 * GC log in the output directory; its output goes to {@code target.log} there.
 */
final class SoakTarget implements AutoCloseable {
    private static final boolean SETPRIV = Files.isExecutable(Path.of("/usr/bin/setpriv"));

    private final SoakEndpoint endpoint;
    private final String model;
    private final Process process;
    private final Path gcLog;
    private final List<String> jvmOptions;
    private final Thread stopOnExit;

    private SoakTarget(SoakEndpoint endpoint, String model, Process process, Path gcLog, List<String> jvmOptions) {
        this.endpoint = endpoint;
        this.model = model;
        this.process = process;
        this.gcLog = gcLog;
        this.jvmOptions = jvmOptions;
        this.stopOnExit = process == null ? null : new Thread(this::stop, "soak-target-stop");
        if (stopOnExit != null) {
            Runtime.getRuntime().addShutdownHook(stopOnExit); // Ctrl-C on the bench stops its target too
        }
    }

    static SoakTarget remote(SoakEndpoint endpoint, String model) throws IOException {
        return new SoakTarget(endpoint, awaitModel(endpoint, model, 10, null), null, null, List.of());
    }

    static SoakTarget embedded(Path dir, String model) throws IOException {
        Path out = dir.toAbsolutePath();
        List<String> extra = new ArrayList<>();
        Path gcLog = null;
        if (BenchProcesses.inheritedOptions().stream().noneMatch(o -> o.startsWith("-Xlog"))) {
            gcLog = out.resolve("gc.log");
            extra.add(gcLogOption(gcLog));
        }
        int port = BenchProcesses.freePort();
        List<String> command = new ArrayList<>();
        if (SETPRIV) {
            // The kernel kills the target if the bench dies without running its shutdown hooks (SIGKILL).
            command.addAll(List.of("/usr/bin/setpriv", "--pdeathsig", "KILL"));
        }
        command.addAll(BenchProcesses.tandem(
                extra,
                List.of(
                        "all",
                        "--http-port",
                        Integer.toString(port),
                        "--bridge-port",
                        "-1",
                        "--cluster-name",
                        "soak-" + UUID.randomUUID().toString().substring(0, 8),
                        "--cluster-port",
                        Integer.toString(LoopbackClusterPorts.base(8)))));
        Path log = out.resolve("target.log");
        Files.writeString(log, "$ " + String.join(" ", command) + "\n");
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        try {
            TandemUnderLoad.awaitListening(process, log);
            SoakEndpoint endpoint = new SoakEndpoint("127.0.0.1", port, "");
            String served = awaitModel(endpoint, model, 90, process);
            List<String> options = new ArrayList<>(BenchProcesses.inheritedOptions());
            options.addAll(extra);
            return new SoakTarget(endpoint, served, process, gcLog, List.copyOf(options));
        } catch (IOException | RuntimeException e) {
            BenchProcesses.stop(List.of(process), 10);
            throw e;
        }
    }

    /**
     * Every GC event with its time, uptime, level and tags, to one file: the pauses are parsed from it. Not
     * rotated ({@code filecount=0}): by default the JVM keeps 5 files of 20 MB, and an hour of {@code gc*}
     * under load outgrows the first.
     */
    static String gcLogOption(Path file) {
        String name = file.toString();
        // -Xlog takes ':' as its separator: a file name holding one must be quoted.
        return "-Xlog:gc*:file=" + (name.contains(":") ? "\"" + name + "\"" : name)
                + ":time,uptime,level,tags:filecount=0";
    }

    /**
     * Until {@code /v1/models} lists a model (a prefill and a decode worker of it are up): {@code wanted} if
     * given, else the first listed.
     */
    static String awaitModel(SoakEndpoint endpoint, String wanted, int seconds, Process process) throws IOException {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<String> r = http.send(endpoint.get("/v1/models"), HttpResponse.BodyHandlers.ofString());
                last = "HTTP " + r.statusCode() + " " + r.body();
                if (r.statusCode() == 200) {
                    JsonArray data = new JsonObject(r.body()).getJsonArray("data", new JsonArray());
                    for (int i = 0; i < data.size(); i++) {
                        String id = data.getJsonObject(i).getString("id");
                        if (wanted.isEmpty() || wanted.equals(id)) {
                            return id;
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                last = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
            if (process != null && !process.isAlive()) {
                throw new IOException("the target JVM exited (code " + process.exitValue() + ")");
            }
            sleep(250);
        }
        throw new IOException(endpoint.baseUrl() + "/v1/models listed no model"
                + (wanted.isEmpty() ? "" : " '" + wanted + "'") + " within " + seconds + " s: " + last);
    }

    SoakEndpoint endpoint() {
        return endpoint;
    }

    String model() {
        return model;
    }

    boolean embedded() {
        return process != null;
    }

    /** The child's pid, or -1 for a remote target. */
    long pid() {
        return process == null ? -1 : process.pid();
    }

    /** The child's GC log, or null (a remote target, or the user's own -Xlog). */
    Path gcLog() {
        return gcLog;
    }

    /** The target in summary.json: what it is, where, its model; for the child its pid, JVM options, GC log. */
    JsonObject json() {
        return new JsonObject()
                .put("kind", embedded() ? "embedded" : "remote")
                .put("url", endpoint.baseUrl())
                .put("model", model)
                .put("pid", embedded() ? pid() : null)
                .put("jvmOptions", new JsonArray(new ArrayList<>(jvmOptions)))
                .put("gcLog", gcLog == null ? null : gcLog.getFileName().toString());
    }

    /** A description for the header line and summary.json. */
    String describe() {
        return embedded() ? "embedded tandem all (pid " + pid() + ", " + endpoint.baseUrl() + ")" : endpoint.baseUrl();
    }

    private void stop() {
        // SIGTERM: the node drains (nothing is running by now) and leaves its cluster of one.
        BenchProcesses.stop(List.of(process), 40);
    }

    @Override
    public void close() {
        if (process == null) {
            return;
        }
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(stopOnExit);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or has run: the target is stopped either way
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
