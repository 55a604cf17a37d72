package dev.tandem.it;

import dev.tandem.HttpTestClient;
import dev.tandem.cluster.LoopbackClusterPorts;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * One loopback Tandem cluster of separate JVMs for one IT class: its own cluster name, Hazelcast base
 * port and YAML file (target/it-logs/&lt;class&gt;/tandem.yaml), logs next to it.
 *
 * <p>Every node joins through the <b>seed</b>, the first node started, which binds the base port. Tests
 * must never kill or stop the seed: nodes started later could not join, and a member that finds no
 * one to join forms a cluster of its own. Start a prefill worker first as the seed and kill others.
 */
public final class TandemCluster implements AutoCloseable {
    /** A node to start: its name (log file), mode, worker id (workers only) and options of its own. */
    public record Node(String name, String mode, String workerId, List<String> args, Map<String, String> env) {
        public Node(String name, String mode, String workerId) {
            this(name, mode, workerId, List.of(), Map.of());
        }

        /** The same node with more command-line options (e.g. {@code --model} for a model of its own). */
        public Node with(String... more) {
            List<String> all = new ArrayList<>(args);
            all.addAll(List.of(more));
            return new Node(name, mode, workerId, List.copyOf(all), env);
        }

        /** The same node with environment variables of its own (e.g. {@code TANDEM_CLUSTER_TLS_CERT}). */
        public Node withEnv(Map<String, String> more) {
            Map<String, String> all = new TreeMap<>(env);
            all.putAll(more);
            return new Node(name, mode, workerId, args, Map.copyOf(all));
        }

        public static Node prefill(String workerId) {
            return new Node(workerId, "prefill", workerId);
        }

        public static Node decode(String workerId) {
            return new Node(workerId, "decode", workerId);
        }

        public static Node router(String name) {
            return new Node(name, "router", null);
        }
    }

    /** Written even when a test overrides nothing: the cluster talks only over loopback. */
    private static final Map<String, Object> LOOPBACK = Map.of("http.host", "127.0.0.1", "cluster.host", "127.0.0.1");

    private static final Duration WORKERS_TIMEOUT = Duration.ofSeconds(30);
    /** Hazelcast ports the members may auto-increment into; all must be free at start. */
    private static final int PORT_SPAN = 20;

    private final String name = "it-" + UUID.randomUUID().toString().substring(0, 8);
    private final Path dir;
    private final Path config;
    private final int basePort;
    private final List<TandemProcess> processes = new CopyOnWriteArrayList<>();
    private final Map<Integer, HttpTestClient> clients = new ConcurrentHashMap<>();
    private final Thread shutdownHook = new Thread(this::killAll, "tandem-it-cluster-kill");
    private TandemProcess seed;

    /**
     * @param overrides config keys in dotted form ({@code "worker.heartbeat-ms" -> 100}) over the defaults
     *                  documented in conf/tandem.yaml; values are scalars, lists or maps
     */
    public TandemCluster(Class<?> testClass, Map<String, ?> overrides) {
        dir = Path.of(System.getProperty("tandem.it.logs", "target/it-logs"), testClass.getSimpleName());
        config = dir.resolve("tandem.yaml");
        basePort = LoopbackClusterPorts.base(PORT_SPAN);
        try {
            Files.createDirectories(dir);
            try (Stream<Path> old = Files.list(dir)) {
                for (Path p : (Iterable<Path>) old::iterator) {
                    if (p.toString().endsWith(".log")) {
                        Files.delete(p);
                    }
                }
            }
            Map<String, Object> settings = new TreeMap<>(LOOPBACK);
            settings.putAll(overrides);
            Files.writeString(config, yaml(settings));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // A test run that dies (or is interrupted) must not leave JVMs behind.
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Starts the nodes and waits until each printed its start-up lines. The very first node of the
     * cluster starts alone (it is the seed); the others start in parallel.
     */
    public List<TandemProcess> start(Node... nodes) {
        List<Node> rest = new ArrayList<>(Arrays.asList(nodes));
        List<TandemProcess> started = new ArrayList<>();
        long t0 = System.nanoTime();
        if (seed == null && !rest.isEmpty()) {
            seed = launch(rest.remove(0)).awaitReady(deadline());
            started.add(seed);
            System.out.printf("[%s] seed %s ready in %d ms%n", name, seed, (System.nanoTime() - t0) / 1_000_000);
            if (seed.clusterPort() != basePort) {
                throw new AssertionError(
                        "seed bound " + seed.clusterPort() + " instead of " + basePort + "\n" + seed.logTail(20));
            }
        }
        List<TandemProcess> launched = new ArrayList<>();
        for (Node n : rest) {
            launched.add(launch(n));
        }
        long deadline = deadline();
        for (TandemProcess p : launched) {
            p.awaitReady(deadline);
        }
        started.addAll(launched);
        // JVM start-up dominates IT time; the line shows where it went.
        System.out.printf("[%s] %s ready in %d ms%n", name, started, (System.nanoTime() - t0) / 1_000_000);
        return started;
    }

    public TandemProcess start(Node node) {
        return start(new Node[] {node}).get(0);
    }

    public TandemProcess startPrefill(String workerId) {
        return start(Node.prefill(workerId));
    }

    public TandemProcess startDecode(String workerId) {
        return start(Node.decode(workerId));
    }

    public TandemProcess startRouter(String name) {
        return start(Node.router(name));
    }

    private static long deadline() {
        return System.nanoTime() + TandemProcess.START_TIMEOUT.toNanos();
    }

    private TandemProcess launch(Node node) {
        List<String> args = new ArrayList<>(List.of(
                "--config",
                config.toString(),
                "--cluster-name",
                name,
                "--cluster-port",
                Integer.toString(basePort),
                "--join",
                "127.0.0.1:" + basePort));
        if (node.mode().equals("router") || node.mode().equals("all")) {
            // Any free bridge port: several routers share the host, and the default 7000 may be taken.
            args.addAll(List.of("--http-port", "0", "--bridge-port", "0"));
        }
        if (node.workerId() != null) {
            args.addAll(List.of("--worker-id", node.workerId()));
        }
        args.addAll(node.args());
        TandemProcess p = TandemProcess.launch(node.name(), node.mode(), args, dir, node.env());
        processes.add(p);
        return p;
    }

    /** The first node started; never kill it (see the class comment). */
    public TandemProcess seed() {
        return seed;
    }

    /** A client for a router, kept per port. */
    public HttpTestClient http(TandemProcess router) {
        return clients.computeIfAbsent(router.httpPort(), HttpTestClient::new);
    }

    /** The registry as the router sees it ({@code GET /admin/workers}). */
    public JsonArray workers(TandemProcess router) {
        HttpResponse<String> r =
                http(router).send(http(router).request("/admin/workers").GET().build());
        if (r.statusCode() != 200) {
            throw new AssertionError("GET /admin/workers: " + r.statusCode() + " " + r.body());
        }
        return new JsonObject(r.body()).getJsonArray("workers");
    }

    /** Waits until the router lists exactly this many prefill and decode workers. */
    public void awaitWorkers(TandemProcess router, int prefill, int decode) {
        long deadline = System.nanoTime() + WORKERS_TIMEOUT.toNanos();
        String last = "(no answer)";
        while (System.nanoTime() < deadline) {
            try {
                JsonArray workers = workers(router);
                last = workers.encode();
                if (count(workers, "prefill") == prefill && count(workers, "decode") == decode) {
                    return;
                }
            } catch (AssertionError e) {
                last = e.getMessage();
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted");
            }
        }
        throw new AssertionError(router.name() + " did not list " + prefill + " prefill and " + decode
                + " decode workers within " + WORKERS_TIMEOUT.toSeconds() + " s; last: " + last + "\n" + describe(30));
    }

    private static long count(JsonArray workers, String role) {
        return workers.stream()
                .filter(w -> role.equals(((JsonObject) w).getString("role")))
                .count();
    }

    /** Every node's log tail, for failure messages. */
    public String describe(int tailLines) {
        StringBuilder sb = new StringBuilder("cluster ")
                .append(name)
                .append(", base port ")
                .append(basePort)
                .append('\n');
        for (TandemProcess p : processes) {
            sb.append(p.logTail(tailLines));
        }
        return sb.toString();
    }

    public String name() {
        return name;
    }

    public Path configFile() {
        return config;
    }

    /** SIGKILLs every node: nothing is left to leave the cluster gracefully for. */
    @Override
    public void close() {
        killAll();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // The JVM is already shutting down: the hook runs (or ran) anyway.
        }
    }

    private void killAll() {
        for (TandemProcess p : processes) {
            p.killNoWait();
        }
        for (TandemProcess p : processes) {
            p.awaitExit(Duration.ofSeconds(5));
        }
    }

    /** Nested YAML from dotted keys; every value is written as JSON, which YAML reads as a flow value. */
    static String yaml(Map<String, ?> overrides) {
        Map<String, Object> root = new TreeMap<>();
        overrides.forEach((key, value) -> {
            String[] parts = key.split("\\.");
            Map<String, Object> node = root;
            for (int i = 0; i < parts.length - 1; i++) {
                @SuppressWarnings("unchecked")
                Map<String, Object> child =
                        (Map<String, Object>) node.computeIfAbsent(parts[i], k -> new TreeMap<String, Object>());
                node = child;
            }
            node.put(parts[parts.length - 1], value);
        });
        StringBuilder sb = new StringBuilder("# Written by TandemCluster: overrides of conf/tandem.yaml's defaults.\n");
        write(sb, root, "");
        return sb.toString();
    }

    private static void write(StringBuilder sb, Map<String, Object> node, String indent) {
        node.forEach((k, v) -> {
            if (v instanceof TreeMap<?, ?>) {
                sb.append(indent).append(k).append(":\n");
                @SuppressWarnings("unchecked")
                Map<String, Object> child = (Map<String, Object>) v;
                write(sb, child, indent + "  ");
            } else {
                sb.append(indent).append(k).append(": ").append(Json.encode(v)).append('\n');
            }
        });
    }
}
