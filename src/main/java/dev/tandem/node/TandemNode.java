package dev.tandem.node;

import dev.tandem.api.http.OpsRoutes;
import dev.tandem.bridge.worker.WorkerBridge;
import dev.tandem.cluster.ClusterNode;
import dev.tandem.cluster.MemberWatch;
import dev.tandem.cluster.TokenizerStore;
import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.config.MemoryBudget;
import dev.tandem.config.TandemConfig;
import dev.tandem.engine.Engine;
import dev.tandem.engine.KvBlockPool;
import dev.tandem.metrics.KvPoolMetrics;
import dev.tandem.metrics.NodeMetrics;
import dev.tandem.metrics.WorkerMetrics;
import dev.tandem.router.ModelCatalog;
import dev.tandem.router.ServedModel;
import dev.tandem.tracing.Tracing;
import dev.tandem.worker.ModelCards;
import dev.tandem.worker.engine.DecodeWorkerVerticle;
import dev.tandem.worker.engine.EngineWorkerSetup;
import dev.tandem.worker.engine.PrefillWorkerVerticle;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.logging.Logger;

/**
 * One JVM's part of a Tandem cluster: a clustered Vert.x node running any mix of a router and
 * prefill/decode workers. The model is loaded once per node and shared by everything on it.
 */
public final class TandemNode {

    /** What this node runs. */
    public record Plan(boolean router, List<String> prefillWorkerIds, List<String> decodeWorkerIds) {
        public static Plan embedded(int prefill, int decode) {
            List<String> p = new ArrayList<>();
            List<String> d = new ArrayList<>();
            for (int i = 1; i <= prefill; i++) {
                p.add("prefill-" + i);
            }
            for (int i = 1; i <= decode; i++) {
                d.add("decode-" + i);
            }
            return new Plan(true, p, d);
        }
    }

    private static final Logger LOG = Logger.getLogger(TandemNode.class.getName());

    private final ClusterNode cluster;
    private final NodeMetrics metrics;
    private final Engine engine;
    private MemoryBudget memory;
    private KvBlockPool kvPool;
    private RouterVerticle router;
    private WorkerBridge workerBridge;
    private final List<PrefillWorkerVerticle> prefillWorkers = new ArrayList<>();
    private final List<DecodeWorkerVerticle> decodeWorkers = new ArrayList<>();
    private final UpstreamWorkers upstreamWorkers = new UpstreamWorkers();
    private MemberWatch members;
    private HttpServer opsServer;
    private volatile boolean deployed;

    private TandemNode(ClusterNode cluster, NodeMetrics metrics, Engine engine) {
        this.cluster = cluster;
        this.metrics = metrics;
        this.engine = engine;
    }

    /** Loads the model, joins the cluster and deploys what the plan asks for. Blocks the caller; not for an event loop. */
    public static TandemNode start(TandemConfig config, Plan plan) {
        return start(
                config, plan, Engines.forModel(config.model(), config.worker().kvBlockSize()));
    }

    /** Starts a node around an engine built elsewhere (tests and benchmarks wrap engines to shape their cost). */
    public static TandemNode start(TandemConfig config, Plan plan, Engine engine) {
        // What may hold KV or grow with traffic shares one budget; capacities above their share are lowered.
        MemoryBudget memory =
                NodeMemory.plan(config, plan, engine, Runtime.getRuntime().maxMemory());
        config = config.withWorker(
                memory.workerSettings(config.worker(), NodeMemory.blockCost(engine.kvLayout()), LOG::warning));
        // Reserved before the node joins: the collection that follows pauses no cluster member.
        KvBlockPool kvPool = NodeMemory.pool(memory, config.worker(), engine.kvLayout());
        if (config.memory().preallocate()) {
            NodeMemory.preallocate(kvPool);
        }
        NodeMetrics metrics = new NodeMetrics();
        String nodeId = UUID.randomUUID().toString();
        Tracing tracing = Tracing.start(config.tracing(), serviceName(plan), nodeId);
        ClusterNode cluster;
        try {
            cluster = ClusterNode.start(
                            config.cluster(),
                            config.router(),
                            metrics.vertxMetricsOptions(),
                            metrics.vertxMetricsFactory(),
                            nodeId,
                            tracing)
                    .await();
        } catch (RuntimeException e) {
            tracing.close();
            metrics.close();
            throw e;
        }
        TandemNode node = new TandemNode(cluster, metrics, engine);
        node.memory = memory;
        node.kvPool = kvPool;
        new KvPoolMetrics(metrics.registry(), kvPool::live, kvPool::idle, kvPool::allocated, kvPool::reused);
        try {
            node.deploy(config, plan).await();
            node.members = MemberWatch.onLeave(cluster.hazelcast(), node::memberLeft);
            node.deployed = true;
            if (config.worker().httpPort() >= 0
                    && (!plan.prefillWorkerIds().isEmpty()
                            || !plan.decodeWorkerIds().isEmpty())) {
                node.opsServer = OpsRoutes.serve(
                                cluster.vertx(),
                                config.http().host(),
                                config.worker().httpPort(),
                                config.http().idleTimeoutMs(),
                                metrics.scrapeHandler(),
                                new OpsRoutes.Check("cluster", cluster::notJoined),
                                new OpsRoutes.Check("workers", () -> node.deployed ? null : "workers not started"))
                        .await();
            }
        } catch (RuntimeException e) {
            node.close().await();
            throw e;
        }
        return node;
    }

    /** {@code service.name}: what the process runs, so a trace shows which kind of process each span came from. */
    static String serviceName(Plan plan) {
        boolean prefill = !plan.prefillWorkerIds().isEmpty();
        boolean decode = !plan.decodeWorkerIds().isEmpty();
        if (plan.router()) {
            return prefill || decode ? "tandem" : "tandem-router";
        }
        return prefill == decode ? "tandem-worker" : prefill ? "tandem-prefill" : "tandem-decode";
    }

    private Future<Void> deploy(TandemConfig config, Plan plan) {
        Vertx vertx = cluster.vertx();
        if (config.model().openai()) {
            // The workers front a GPU server; a router in this JVM still loads its own (built-in) model.
            Future<Void> workers = upstreamWorkers.deploy(
                    vertx,
                    config,
                    plan,
                    new TokenizerStore(cluster.hazelcast()),
                    cluster.nodeId(),
                    () -> announcer(config),
                    id -> new WorkerMetrics(metrics.registry(), id));
            Plan routerOnly = new Plan(plan.router(), List.of(), List.of());
            return workers.compose(v -> deployEngineRoles(config, routerOnly));
        }
        return deployEngineRoles(config, plan);
    }

    private Future<Void> deployEngineRoles(TandemConfig config, Plan plan) {
        Vertx vertx = cluster.vertx();
        if (!plan.prefillWorkerIds().isEmpty() || !plan.decodeWorkerIds().isEmpty()) {
            // Filed before the workers register, so a router that learns of them can tokenize for them.
            new TokenizerStore(cluster.hazelcast())
                    .publish(ModelCards.of(engine).tokenizer(), engine.tokenizer());
        }
        List<Future<String>> deployed = new ArrayList<>();
        EngineWorkerSetup setup = new EngineWorkerSetup(
                engine,
                config.worker(),
                () -> announcer(config),
                cluster.nodeId(),
                id -> new WorkerMetrics(metrics.registry(), id),
                kvPool,
                cluster.tracer());
        for (String id : plan.prefillWorkerIds()) {
            PrefillWorkerVerticle w = new PrefillWorkerVerticle(id, setup);
            prefillWorkers.add(w);
            deployed.add(vertx.deployVerticle(w));
        }
        for (String id : plan.decodeWorkerIds()) {
            DecodeWorkerVerticle w = new DecodeWorkerVerticle(id, setup);
            decodeWorkers.add(w);
            deployed.add(vertx.deployVerticle(w));
        }
        if (plan.router()) {
            router = new RouterVerticle(
                    config,
                    new ModelCatalog.Local(
                            ServedModel.of(engine.info(), engine.tokenizer(), engine.chatTemplate()),
                            ModelCards.of(engine).tokenizer()),
                    cluster,
                    metrics,
                    memory,
                    "router-" + UUID.randomUUID().toString().substring(0, 8));
            Future<String> routerDeployed = vertx.deployVerticle(router);
            deployed.add(routerDeployed);
            if (config.workerBridge().enabled()) {
                // After the router: a worker that joins is checked against the router's models.
                deployed.add(routerDeployed.compose(id -> {
                    workerBridge = new WorkerBridge(
                            config.workerBridge(),
                            config.worker(),
                            cluster.hazelcast(),
                            cluster.nodeId(),
                            cluster.registrySeal(),
                            router.models(),
                            metrics.registry());
                    return vertx.deployVerticle(workerBridge);
                }));
            }
        }
        return Future.all(deployed).mapEmpty();
    }

    /** Work a departed router left on this node's workers is dropped: nobody will read its result. */
    private void memberLeft(String nodeId) {
        prefillWorkers.forEach(w -> w.onRouterNodeLeft(nodeId));
        decodeWorkers.forEach(w -> w.onRouterNodeLeft(nodeId));
        upstreamWorkers.routerNodeLeft(nodeId);
        if (workerBridge != null) {
            workerBridge.onRouterNodeLeft(nodeId);
        }
    }

    private WorkerAnnouncer announcer(TandemConfig config) {
        return new WorkerAnnouncer(
                cluster.vertx(),
                cluster.hazelcast(),
                cluster.registrySeal(),
                config.worker().heartbeatMs(),
                config.worker().registryTtlMs());
    }

    public Vertx vertx() {
        return cluster.vertx();
    }

    public ClusterNode cluster() {
        return cluster;
    }

    /** This node's meters (Prometheus registry), served at {@code /metrics}. */
    public NodeMetrics metrics() {
        return metrics;
    }

    public Engine engine() {
        return engine;
    }

    /** The KV block pool this node's workers share. */
    public KvBlockPool kvPool() {
        return kvPool;
    }

    /** This node's memory budget and its shares. */
    public MemoryBudget memoryBudget() {
        return memory;
    }

    /** The router on this node, or null. */
    public RouterVerticle router() {
        return router;
    }

    /** The worker bridge on this node, or null. */
    public WorkerBridge workerBridge() {
        return workerBridge;
    }

    public List<PrefillWorkerVerticle> prefillWorkers() {
        return prefillWorkers;
    }

    public List<DecodeWorkerVerticle> decodeWorkers() {
        return decodeWorkers;
    }

    /** Undeploys everything (workers withdraw from the registry) and leaves the cluster. */
    /** The port of the worker node's health and metrics server, or -1 when it has none. */
    public int opsPort() {
        return opsServer == null ? -1 : opsServer.actualPort();
    }

    /**
     * A graceful stop (SIGTERM): the router refuses new requests and the workers say they drain, all at
     * once; then the node waits — at most {@code drainMs} — for what is running to finish, and closes.
     */
    public Future<Void> shutdown(long drainMs) {
        List<Future<Void>> drained = new ArrayList<>();
        if (router != null) {
            drained.add(router.drainForShutdown(drainMs));
        }
        prefillWorkers.forEach(w -> drained.add(w.drainForShutdown(drainMs)));
        decodeWorkers.forEach(w -> drained.add(w.drainForShutdown(drainMs)));
        upstreamWorkers.drainForShutdown(drainMs, drained);
        return Future.join(drained).transform(ar -> close());
    }

    public Future<Void> close() {
        deployed = false;
        if (members != null) {
            members.close();
        }
        return cluster.close().eventually(() -> {
            metrics.close();
            return Future.succeededFuture();
        });
    }
}
