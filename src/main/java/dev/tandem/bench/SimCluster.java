package dev.tandem.bench;

import dev.tandem.cluster.LoopbackClusterPorts;
import dev.tandem.config.TandemConfig;
import dev.tandem.engine.sim.SimProfile;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.WorkerRole;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * A real Tandem cluster on loopback for one benchmark run: one Hazelcast member holding every sim
 * worker, and {@code routers} router members — each its own Vert.x and Hazelcast instance, sharing
 * the registry, loads and prefix index as separate router processes would. Cold caches every time.
 */
final class SimCluster implements BenchCluster {

    /** What a run's cluster is made of. */
    record Shape(
            int prefill,
            int decode,
            int routers,
            String profile,
            double timeScale,
            int blockSize,
            long prefixCacheBytes,
            long kvCapacityBytes,
            int localPrefillMaxTokens,
            boolean viaUpstream,
            JsonObject flowControl) {

        /** This shape with the routers' {@code flow-control} section. */
        Shape withFlowControl(JsonObject flowControl) {
            return new Shape(
                    prefill,
                    decode,
                    routers,
                    profile,
                    timeScale,
                    blockSize,
                    prefixCacheBytes,
                    kvCapacityBytes,
                    localPrefillMaxTokens,
                    viaUpstream,
                    flowControl);
        }

        static Shape of(
                int prefill,
                int decode,
                int routers,
                SimProfile profile,
                double timeScale,
                int blockSize,
                long prefixCacheBytes,
                int localPrefillMaxTokens,
                boolean viaUpstream) {
            return new Shape(
                    prefill,
                    decode,
                    routers,
                    profile.name(),
                    timeScale,
                    blockSize,
                    prefixCacheBytes,
                    profile.kvMemoryBytes(),
                    localPrefillMaxTokens,
                    viaUpstream,
                    new JsonObject());
        }
    }

    private final List<TandemNode> routers;
    private final TandemNode workers;

    private SimCluster(TandemNode workers, List<TandemNode> routers) {
        this.workers = workers;
        this.routers = routers;
    }

    /** Starts the cluster with {@code policy} on every router and waits until each router sees every worker. */
    static SimCluster start(Shape shape, String policy) {
        return start(shape, policy, new JsonObject());
    }

    /** {@link #start} with some keys of the configuration overridden: {@code {"worker": {"max-batch": 16}}}. */
    static SimCluster start(Shape shape, String policy, JsonObject overrides) {
        JsonObject json = configJson(shape, policy);
        for (String section : overrides.fieldNames()) {
            JsonObject merged = json.getJsonObject(section, new JsonObject()).copy();
            merged.mergeIn(overrides.getJsonObject(section));
            json.put(section, merged);
        }
        TandemConfig config = TandemConfig.fromJson(json);
        List<String> p = new ArrayList<>();
        List<String> d = new ArrayList<>();
        for (int i = 1; i <= shape.prefill(); i++) {
            p.add("prefill-" + i);
        }
        for (int i = 1; i <= shape.decode(); i++) {
            d.add("decode-" + i);
        }
        TandemNode workers = TandemNode.start(config, new TandemNode.Plan(false, p, d));
        List<TandemNode> routers = new ArrayList<>();
        SimCluster cluster = new SimCluster(workers, routers);
        try {
            for (int r = 0; r < shape.routers(); r++) {
                routers.add(TandemNode.start(config, new TandemNode.Plan(true, List.of(), List.of())));
            }
            for (TandemNode router : routers) {
                awaitWorkers(router, shape.prefill(), shape.decode());
            }
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** The configuration every member shares: loopback, cold caches, queues large enough not to refuse. */
    static TandemConfig config(Shape shape, String policy) {
        return TandemConfig.fromJson(configJson(shape, policy));
    }

    /** {@link #config} as the JSON (also YAML) a configuration file would hold. */
    static JsonObject configJson(Shape shape, String policy) {
        // Below the ephemeral range: a member's dial to one that left must never connect to itself.
        int port = LoopbackClusterPorts.base(32);
        JsonObject json = new JsonObject()
                .put(
                        "http",
                        new JsonObject().put("host", "127.0.0.1").put("port", 0).put("max-body-bytes", 16 << 20))
                .put("bridge", new JsonObject().put("tcp-port", -1).put("sockjs", false))
                .put("worker-bridge", new JsonObject().put("tcp-port", -1))
                .put(
                        "cluster",
                        new JsonObject()
                                .put("name", "tandem-bench-" + UUID.randomUUID())
                                .put("host", "127.0.0.1")
                                .put("port", port)
                                .put("members", new JsonArray().add("127.0.0.1:" + port))
                                .put("shutdown-drain-ms", 0))
                .put(
                        "model",
                        new JsonObject()
                                .put("engine", "sim")
                                .put("sim-profile", shape.profile())
                                .put("time-scale", shape.timeScale()))
                // Sim blocks are stand-ins counted as the modelled model's: nothing real to reserve.
                .put("memory", new JsonObject().put("preallocate", false))
                .put(
                        "worker",
                        new JsonObject()
                                .put("kv-block-size", shape.blockSize())
                                .put("prefix-cache-bytes", shape.prefixCacheBytes())
                                .put("kv-capacity-bytes", shape.kvCapacityBytes())
                                .put("prefill-concurrency", 1)
                                .put("max-batch", 256)
                                .put("max-queued-prefill-tokens", 1 << 30)
                                .put("max-waiting-sequences", 1 << 20)
                                .put("max-kv-transfer-bytes", 1L << 40)
                                .put("heartbeat-ms", scaledPeriod(250, shape.timeScale())))
                .put(
                        "router",
                        new JsonObject()
                                .put("policy", policy)
                                .put("max-in-flight", 1 << 20)
                                .put("local-prefill-max-tokens", shape.localPrefillMaxTokens())
                                .put("request-timeout-ms", 86_400_000L)
                                .put("prefill-timeout-ms", 3_600_000L)
                                .put("decode-start-timeout-ms", 600_000L)
                                .put("decode-stall-timeout-ms", 600_000L)
                                .put("load-report-ms", scaledPeriod(250, shape.timeScale())))
                .put("flow-control", shape.flowControl().copy());
        return json;
    }

    /**
     * A period of the real system, in wall-clock ms at this time scale: what routers know of workers'
     * loads (heartbeats, load reports, KV events) must be as fresh in simulated time as it would be.
     */
    static long scaledPeriod(long realMs, double timeScale) {
        return Math.max(10, Math.round(realMs / timeScale));
    }

    /** The router members. */
    List<TandemNode> routers() {
        return List.copyOf(routers);
    }

    @Override
    public List<Integer> httpPorts() {
        return routers.stream().map(n -> n.router().httpPort()).toList();
    }

    @Override
    public String model() {
        return workers.engine().info().name();
    }

    long fingerprint() {
        return workers.engine().info().fingerprint();
    }

    /** KV bytes the routers saw moved between workers (in the simulated model's bytes). */
    @Override
    public long kvBytesMoved() {
        return kvBytesMoved(routers);
    }

    static long kvBytesMoved(List<TandemNode> routers) {
        double sum = 0;
        for (TandemNode r : routers) {
            DistributionSummary s =
                    r.metrics().registry().find("tandem.request.kv.moved").summary();
            sum += s == null ? 0 : s.totalAmount();
        }
        return Math.round(sum);
    }

    /** Requests whose decode worker prefilled the prompt itself. */
    @Override
    public long localPrefills() {
        return localPrefills(routers);
    }

    static long localPrefills(List<TandemNode> routers) {
        double sum = 0;
        for (TandemNode r : routers) {
            Counter c = r.metrics()
                    .registry()
                    .find("tandem.prefill.placement")
                    .tag("where", "decode-worker")
                    .counter();
            sum += c == null ? 0 : c.count();
        }
        return Math.round(sum);
    }

    /**
     * Where the time went, from the workers' own timers, in the trace's time: the mean and max wait
     * in the prefill queues, prefill compute, KV transfer and decode step.
     */
    @Override
    public String timings(double timeScale) {
        StringBuilder sb = new StringBuilder();
        for (String name :
                List.of("tandem.prefill.queue", "tandem.prefill.compute", "tandem.kv.transfer", "tandem.decode.step")) {
            double total = 0;
            double max = 0;
            long count = 0;
            for (io.micrometer.core.instrument.Timer t :
                    workers.metrics().registry().find(name).timers()) {
                total += t.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS);
                max = Math.max(max, t.max(java.util.concurrent.TimeUnit.MILLISECONDS));
                count += t.count();
            }
            sb.append(String.format(
                    java.util.Locale.ROOT,
                    "%s%s mean %.1f ms (max %.0f)",
                    sb.length() == 0 ? "" : ", ",
                    name.substring("tandem.".length()),
                    count == 0 ? 0 : total / count * timeScale,
                    max * timeScale));
        }
        return sb.toString();
    }

    @Override
    public void close() {
        List<Future<Void>> closing = new ArrayList<>();
        for (TandemNode r : routers) {
            closing.add(r.close());
        }
        for (Future<Void> f : closing) {
            f.await();
        }
        workers.close().await();
    }

    static void awaitWorkers(TandemNode router, int prefill, int decode) {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (router.router().directory().workers(WorkerRole.PREFILL).size() < prefill
                || router.router().directory().workers(WorkerRole.DECODE).size() < decode) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "the router did not see " + prefill + " prefill and " + decode + " decode workers within 60 s");
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting the cluster", e);
            }
        }
    }
}
