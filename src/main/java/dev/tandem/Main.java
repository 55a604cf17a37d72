package dev.tandem;

import dev.tandem.config.ConfigException;
import dev.tandem.config.ConfigLoader;
import dev.tandem.config.EnvOverrides;
import dev.tandem.config.KvEventsSettings;
import dev.tandem.config.MemoryBudget;
import dev.tandem.config.ModelSettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.UpstreamSettings;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The {@code tandem} command: {@code all} (the default: router and workers in one JVM), {@code router},
 * {@code prefill} and {@code decode}, each a node of one cluster.
 */
@Command(
        name = "tandem",
        mixinStandardHelpOptions = true,
        version = "tandem 0.1.0",
        description = "Disaggregated LLM inference router. Without a subcommand runs 'all'.",
        subcommands = {
            Main.All.class,
            Main.RouterCommand.class,
            Main.PrefillCommand.class,
            Main.DecodeCommand.class,
            dev.tandem.bench.BenchCommand.class
        })
public final class Main implements Callable<Integer> {

    /** Options every mode shares. */
    static final class CommonOptions {
        @Option(names = "--config", description = "YAML configuration (default: conf/tandem.yaml if present)")
        Path config;

        @Option(
                names = "--model",
                description =
                        "a GGUF file (its tokenizer and chat template inside), or a llama2.c checkpoint (legacy float32 .bin); default: the built-in model")
        String model;

        @Option(names = "--tokenizer", description = "llama2.c tokenizer.bin for --model")
        String tokenizer;

        @Option(names = "--engine", description = "reference, sim or openai (workers fronting a vLLM/SGLang server)")
        String engine;

        @Option(names = "--upstream", description = "engine openai: the upstream server's base URL, http://host:port")
        String upstream;

        @Option(names = "--upstream-protocol", description = "engine openai: vllm (default) or sglang")
        String upstreamProtocol;

        @Option(
                names = "--upstream-kv-events",
                description = "engine openai: the upstream's KV event publisher, tcp://host:port (its"
                        + " --kv-events-config endpoint); routers then see what its prefix cache holds")
        String upstreamKvEvents;

        @Option(
                names = "--upstream-kv-events-replay",
                description = "engine openai: the upstream's KV event replay endpoint, tcp://host:port")
        String upstreamKvEventsReplay;

        @Option(names = "--join", split = ",", description = "cluster members to join, host:port[,host:port…]")
        List<String> join;

        @Option(names = "--cluster-name", description = "Hazelcast cluster name")
        String clusterName;

        @Option(names = "--cluster-port", description = "Hazelcast member port (auto-increments when taken)")
        Integer clusterPort;

        @Option(names = "--http-port", description = "router HTTP port")
        Integer httpPort;

        @Option(
                names = "--bridge-port",
                description = "router TCP event-bus bridge port (-1 = none, 0 = any free port)")
        Integer bridgePort;

        @Option(
                names = "--worker-bridge-port",
                description =
                        "worker bridge port on router nodes, for workers in other languages (-1 = none, 0 = any free port)")
        Integer workerBridgePort;

        TandemConfig load() {
            Path file = config != null ? config : Path.of("conf", "tandem.yaml");
            JsonObject json = ConfigLoader.readYaml(file, config != null);
            TandemConfig c = EnvOverrides.apply(json, System.getenv()).parse();
            if (model != null) {
                c = c.withModel(c.model().withPath(model));
            }
            if (tokenizer != null) {
                c = c.withModel(c.model().withTokenizer(tokenizer));
            }
            c = withEngineFlags(c, engine, upstream, upstreamProtocol);
            c = withKvEventFlags(c, upstreamKvEvents, upstreamKvEventsReplay);
            if (join != null) {
                c = c.withCluster(c.cluster().withMembers(join));
            }
            if (clusterName != null) {
                c = c.withCluster(c.cluster().withName(clusterName));
            }
            if (clusterPort != null) {
                c = c.withCluster(c.cluster().withPort(clusterPort));
            }
            if (httpPort != null) {
                c = c.withHttp(c.http().withPort(httpPort));
            }
            if (bridgePort != null) {
                if (bridgePort < -1 || bridgePort > 65535) {
                    throw new ConfigException("--bridge-port must be between -1 and 65535, got " + bridgePort);
                }
                c = c.withBridge(c.bridge().withTcpPort(bridgePort));
            }
            if (workerBridgePort != null) {
                if (workerBridgePort < -1 || workerBridgePort > 65535) {
                    throw new ConfigException(
                            "--worker-bridge-port must be between -1 and 65535, got " + workerBridgePort);
                }
                c = c.withWorkerBridge(c.workerBridge().withTcpPort(workerBridgePort));
            }
            return c;
        }
    }

    /** The --engine, --upstream and --upstream-protocol flags over the configuration's model section. */
    private static TandemConfig withEngineFlags(
            TandemConfig c, String engine, String upstream, String upstreamProtocol) {
        ModelSettings m = c.model();
        if (upstream != null || upstreamProtocol != null || "openai".equals(engine)) {
            UpstreamSettings u = m.upstream();
            if (upstream != null) {
                u = u.withUrl(upstream);
            }
            if (upstreamProtocol != null) {
                u = u.withProtocol(upstreamProtocol.toLowerCase(java.util.Locale.ROOT));
            }
            if (u.url().isBlank()) {
                throw new ConfigException("--engine openai needs --upstream URL (or model.upstream-url)");
            }
            u.uri();
            return c.withModel(m.withUpstream(u));
        }
        if (engine != null && !engine.equals(m.engine())) {
            if ("sim".equals(engine)) {
                return c.withModel(m.withSim(m.simProfile(), m.timeScale()));
            }
            throw new ConfigException("--engine must be reference, sim or openai; reference is set in the"
                    + " configuration file's model.engine, got '" + engine + "'");
        }
        return c;
    }

    /** The --upstream-kv-events and --upstream-kv-events-replay flags over the model section's. */
    private static TandemConfig withKvEventFlags(TandemConfig c, String endpoint, String replay) {
        if (endpoint == null && replay == null) {
            return c;
        }
        UpstreamSettings u = c.model().upstream();
        KvEventsSettings events = u.kvEvents();
        if (endpoint != null) {
            events = events.withEndpoint(endpoint);
        }
        if (replay != null) {
            events = events.withReplayEndpoint(replay);
        }
        return c.withModel(c.model().withUpstream(u.withKvEvents(events)));
    }

    /** How many workers the embedded mode starts. */
    static final class EmbeddedOptions {
        @Option(names = "--prefill-workers", description = "prefill workers in this JVM (default 2)")
        Integer prefillWorkers;

        @Option(names = "--decode-workers", description = "decode workers in this JVM (default 2)")
        Integer decodeWorkers;

        int run(CommonOptions options) {
            TandemConfig config = options.load();
            if (config.cluster().joinsNobody()) {
                // Told nothing of other members: a cluster of one, never a stranger's (configuration.md, "Configuration
                // file, environment, flags").
                config = config.withCluster(config.cluster().asClusterOfOne());
                System.out.println(
                        "Embedded: a cluster of one (no --join, cluster.members or cluster.hazelcast-config)");
            }
            int p = prefillWorkers != null ? prefillWorkers : config.embedded().prefillWorkers();
            int d = decodeWorkers != null ? decodeWorkers : config.embedded().decodeWorkers();
            return launch(config, TandemNode.Plan.embedded(p, d));
        }
    }

    @Mixin
    CommonOptions common = new CommonOptions();

    @Mixin
    EmbeddedOptions embedded = new EmbeddedOptions();

    @Override
    public Integer call() {
        return embedded.run(common);
    }

    @Command(name = "all", description = "Router and workers in one JVM (a single-member cluster unless --join).")
    static final class All implements Callable<Integer> {
        @Mixin
        CommonOptions common = new CommonOptions();

        @Mixin
        EmbeddedOptions embedded = new EmbeddedOptions();

        @Override
        public Integer call() {
            return embedded.run(common);
        }
    }

    @Command(name = "router", description = "A router node: HTTP API and scheduling, no model compute.")
    static final class RouterCommand implements Callable<Integer> {
        @Mixin
        CommonOptions common = new CommonOptions();

        @Override
        public Integer call() {
            return launch(common.load(), new TandemNode.Plan(true, List.of(), List.of()));
        }
    }

    @Command(name = "prefill", description = "A prefill worker node.")
    static final class PrefillCommand implements Callable<Integer> {
        @Mixin
        CommonOptions common = new CommonOptions();

        @Option(names = "--worker-id", description = "worker id (default: prefill-<random>)")
        String workerId;

        @Override
        public Integer call() {
            String id = workerId != null
                    ? workerId
                    : "prefill-" + UUID.randomUUID().toString().substring(0, 8);
            return launch(common.load(), new TandemNode.Plan(false, List.of(id), List.of()));
        }
    }

    @Command(name = "decode", description = "A decode worker node.")
    static final class DecodeCommand implements Callable<Integer> {
        @Mixin
        CommonOptions common = new CommonOptions();

        @Option(names = "--worker-id", description = "worker id (default: decode-<random>)")
        String workerId;

        @Override
        public Integer call() {
            String id = workerId != null
                    ? workerId
                    : "decode-" + UUID.randomUUID().toString().substring(0, 8);
            return launch(common.load(), new TandemNode.Plan(false, List.of(), List.of(id)));
        }
    }

    /** Hazelcast and Vert.x chatter at WARNING unless the user brought a logging configuration. */
    private static void configureLogging() {
        if (System.getProperty("java.util.logging.config.file") != null) {
            return;
        }
        try (java.io.InputStream in = Main.class.getResourceAsStream("/tandem-logging.properties")) {
            if (in != null) {
                java.util.logging.LogManager.getLogManager().readConfiguration(in);
            }
        } catch (java.io.IOException e) {
            System.err.println("tandem: default logging configuration not loaded: " + e.getMessage());
        }
    }

    static int launch(TandemConfig config, TandemNode.Plan plan) {
        if (config.logging().json()) {
            dev.tandem.logging.JsonLogFormatter.install();
        }
        TandemNode node = TandemNode.start(config, plan);
        // SIGTERM drains: running requests finish (up to shutdown-drain-ms) before the node leaves.
        long drainMs = config.cluster().shutdownDrainMs();
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            try {
                                node.shutdown(drainMs)
                                        .await(drainMs + 10_000, java.util.concurrent.TimeUnit.MILLISECONDS);
                            } catch (java.util.concurrent.TimeoutException e) {
                                System.err.println("tandem: shutdown did not finish in " + (drainMs + 10_000)
                                        + " ms; exiting anyway");
                            }
                        },
                        "tandem-shutdown"));
        System.out.println("Tandem node joined cluster '" + config.cluster().name() + "' (member "
                + node.cluster().hazelcast().getCluster().getLocalMember().getAddress() + ")");
        if (!plan.prefillWorkerIds().isEmpty() || !plan.decodeWorkerIds().isEmpty()) {
            System.out.println("  model: " + node.engine().info().name() + " ("
                    + node.engine().info().config() + ")");
        } else {
            System.out.println("  models: learned from the workers that register (pre-loaded: "
                    + node.engine().info().name() + ")");
        }
        if (!plan.prefillWorkerIds().isEmpty() || !plan.decodeWorkerIds().isEmpty()) {
            System.out.println("  workers: prefill " + plan.prefillWorkerIds() + ", decode " + plan.decodeWorkerIds());
        }
        node.memoryBudget().describe().forEach(line -> System.out.println("  " + line));
        if (node.kvPool().live() > 0) {
            System.out.println("    KV pool: " + node.kvPool().live() + " blocks allocated at start ("
                    + MemoryBudget.bytes(
                            node.kvPool().live() * node.engine().kvLayout().wireBlockBytes())
                    + " of floats; memory.preallocate)");
        }
        if (node.opsPort() >= 0) {
            System.out.println("  health and metrics on http://" + config.http().host() + ":" + node.opsPort());
        }
        if (node.router() != null) {
            var tls = config.http().tls();
            String url = tls.scheme("http", "https") + "://" + config.http().host() + ":"
                    + node.router().httpPort();
            System.out.println("  router " + node.router().routerId() + " listening on " + url
                    + (tls.enabled()
                            ? " (TLS" + (tls.clientAuth() ? ", client certificates required" : "") + ")"
                            : ""));
            if (node.router().httpListeners().plainPort() >= 0) {
                System.out.println("  clear-text HTTP on http://"
                        + config.http().host() + ":"
                        + node.router().httpListeners().plainPort()
                        + (tls.required() ? " refuses requests (http.tls-required)" : ""));
            }
            if (node.router().bridge() != null) {
                System.out.println("  event-bus bridge listening on tcp://"
                        + config.bridge().host() + ":" + node.router().bridge().tcpPort()
                        + (config.bridge().tls().enabled() ? " (TLS)" : ""));
            }
            if (node.workerBridge() != null) {
                System.out.println("  worker bridge listening on tcp://"
                        + config.workerBridge().host() + ":"
                        + node.workerBridge().port()
                        + (config.workerBridge().tls().enabled() ? " (TLS)" : ""));
            }
            System.out.println("Try:");
            System.out.println("  curl -N " + url + "/v1/completions -H 'Content-Type: application/json' "
                    + "-d '{\"prompt\": \"Once upon a time\", \"max_tokens\": 32, \"stream\": true}'");
        }
        return 0;
    }

    /**
     * Netty copies every socket read into a new heap buffer, and the event bus copies KV chunks into more
     * (its record parser); Java zeroes each such array first. Netty allocates them without zeroing when it
     * may reach {@code jdk.internal.misc.Unsafe}: the jar's manifest opens that package, and this property,
     * read once when Netty loads, lets Netty use it. {@code tandem bench kv}, interleaved with and without:
     * the event bus carried 7-24% more. A value set on the command line wins.
     */
    static void allowNettyUninitializedArrays() {
        if (System.getProperty("io.netty.tryReflectionSetAccessible") == null) {
            System.setProperty("io.netty.tryReflectionSetAccessible", "true");
        }
    }

    public static void main(String[] args) {
        allowNettyUninitializedArrays();
        configureLogging();
        CommandLine cli = new CommandLine(new Main());
        cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
            if (e instanceof ConfigException || e instanceof java.io.UncheckedIOException) {
                cmd.getErr().println("tandem: " + e.getMessage());
                return 2;
            }
            throw e;
        });
        int code = cli.execute(args);
        if (code != 0) {
            System.exit(code);
        }
        // Exit code 0 with live nodes: the Vert.x threads keep the JVM running until it is stopped.
        if (Arrays.asList(args).contains("--help")
                || Arrays.asList(args).contains("-h")
                || Arrays.asList(args).contains("--version")
                || Arrays.asList(args).contains("-V")) {
            System.exit(0);
        }
    }
}
