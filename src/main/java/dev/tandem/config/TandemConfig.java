package dev.tandem.config;

import io.vertx.core.json.JsonObject;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The whole configuration, read once at start-up from {@code conf/tandem.yaml} (plus overrides) into
 * immutable records with defaults. Unknown keys fail start-up with their name.
 */
public record TandemConfig(
        HttpSettings http,
        BridgeSettings bridge,
        WorkerBridgeSettings workerBridge,
        ClusterSettings cluster,
        ModelSettings model,
        WorkerSettings worker,
        RouterSettings router,
        MemorySettings memory,
        EmbeddedSettings embedded,
        FlowControlSettings flowControl,
        ScalingSettings scaling,
        TracingSettings tracing,
        LoggingSettings logging) {

    /** How many workers {@code tandem all} starts in its one JVM. */
    public record EmbeddedSettings(int prefillWorkers, int decodeWorkers) {
        static EmbeddedSettings read(ConfigSection s) {
            EmbeddedSettings e =
                    new EmbeddedSettings(s.integer("prefill-workers", 2, 1, 64), s.integer("decode-workers", 2, 1, 64));
            s.rejectUnknownKeys();
            return e;
        }
    }

    /** The configuration's sections: each record component reads the section of its name, in kebab case. */
    static final Set<String> SECTIONS = Arrays.stream(TandemConfig.class.getRecordComponents())
            .map(c -> c.getName().replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT))
            .collect(Collectors.toUnmodifiableSet());

    public static TandemConfig fromJson(JsonObject json) {
        ConfigSection root = new ConfigSection("", json);
        TandemConfig config = new TandemConfig(
                HttpSettings.read(root.section("http")),
                BridgeSettings.read(root.section("bridge")),
                WorkerBridgeSettings.read(root.section("worker-bridge")),
                ClusterSettings.read(root.section("cluster")),
                ModelSettings.read(root.section("model")),
                WorkerSettings.read(root.section("worker")),
                RouterSettings.read(root.section("router")),
                MemorySettings.read(root.section("memory")),
                EmbeddedSettings.read(root.section("embedded")),
                FlowControlSettings.read(root.section("flow-control")),
                ScalingSettings.read(root.section("scaling")),
                TracingSettings.read(root.section("tracing")),
                LoggingSettings.read(root.section("logging")));
        root.rejectUnknownKeys();
        return config;
    }

    public static TandemConfig defaults() {
        return fromJson(new JsonObject());
    }

    public TandemConfig withHttp(HttpSettings http) {
        return new TandemConfig(
                http,
                bridge,
                workerBridge,
                cluster,
                model,
                worker,
                router,
                memory,
                embedded,
                flowControl,
                scaling,
                tracing,
                logging);
    }

    public TandemConfig withBridge(BridgeSettings bridge) {
        return new TandemConfig(
                http,
                bridge,
                workerBridge,
                cluster,
                model,
                worker,
                router,
                memory,
                embedded,
                flowControl,
                scaling,
                tracing,
                logging);
    }

    public TandemConfig withWorkerBridge(WorkerBridgeSettings workerBridge) {
        return new TandemConfig(
                http,
                bridge,
                workerBridge,
                cluster,
                model,
                worker,
                router,
                memory,
                embedded,
                flowControl,
                scaling,
                tracing,
                logging);
    }

    public TandemConfig withCluster(ClusterSettings cluster) {
        return new TandemConfig(
                http,
                bridge,
                workerBridge,
                cluster,
                model,
                worker,
                router,
                memory,
                embedded,
                flowControl,
                scaling,
                tracing,
                logging);
    }

    public TandemConfig withModel(ModelSettings model) {
        return new TandemConfig(
                http,
                bridge,
                workerBridge,
                cluster,
                model,
                worker,
                router,
                memory,
                embedded,
                flowControl,
                scaling,
                tracing,
                logging);
    }

    public TandemConfig withWorker(WorkerSettings worker) {
        return new TandemConfig(
                http,
                bridge,
                workerBridge,
                cluster,
                model,
                worker,
                router,
                memory,
                embedded,
                flowControl,
                scaling,
                tracing,
                logging);
    }

    public TandemConfig withFlowControl(FlowControlSettings flowControl) {
        return new TandemConfig(
                http,
                bridge,
                workerBridge,
                cluster,
                model,
                worker,
                router,
                memory,
                embedded,
                flowControl,
                scaling,
                tracing,
                logging);
    }

    public TandemConfig withTracing(TracingSettings tracing) {
        return new TandemConfig(
                http,
                bridge,
                workerBridge,
                cluster,
                model,
                worker,
                router,
                memory,
                embedded,
                flowControl,
                scaling,
                tracing,
                logging);
    }
}
