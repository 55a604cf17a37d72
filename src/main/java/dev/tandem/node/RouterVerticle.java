package dev.tandem.node;

import com.hazelcast.core.HazelcastInstance;
import dev.tandem.api.ApiKeys;
import dev.tandem.api.OpenAiRequestParser;
import dev.tandem.api.Tenants;
import dev.tandem.api.http.ConsoleRoutes;
import dev.tandem.api.http.Http2Refusal;
import dev.tandem.api.http.HttpApi;
import dev.tandem.api.http.HttpListeners;
import dev.tandem.api.http.HttpProtocolErrors;
import dev.tandem.api.http.OpsRoutes;
import dev.tandem.api.http.RequestReadTimeout;
import dev.tandem.bridge.client.ClientBridges;
import dev.tandem.bridge.console.ConsoleFeed;
import dev.tandem.cluster.AffinityStore;
import dev.tandem.cluster.ClusterNode;
import dev.tandem.cluster.HazelcastTenantQuotas;
import dev.tandem.cluster.PrefixIndex;
import dev.tandem.cluster.RequestIdSource;
import dev.tandem.cluster.RequestIds;
import dev.tandem.cluster.RouterLoadBoard;
import dev.tandem.cluster.SessionAffinity;
import dev.tandem.cluster.ShutdownDrain;
import dev.tandem.cluster.TenantQuotas;
import dev.tandem.cluster.TokenizerStore;
import dev.tandem.cluster.WorkerDirectory;
import dev.tandem.config.MemoryBudget;
import dev.tandem.config.RouterSettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.metrics.FlowMetrics;
import dev.tandem.metrics.NodeMetrics;
import dev.tandem.metrics.RegistryGauges;
import dev.tandem.metrics.RouterMetrics;
import dev.tandem.metrics.SchedulingMetrics;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.FirstToken;
import dev.tandem.protocol.JsonCodec;
import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.TokenBatch;
import dev.tandem.router.EventBusDispatcher;
import dev.tandem.router.LoadReporter;
import dev.tandem.router.LoadTracker;
import dev.tandem.router.ModelCatalog;
import dev.tandem.router.ModelSchedulers;
import dev.tandem.router.PairScheduler;
import dev.tandem.router.RequestRouter;
import dev.tandem.router.RouterIdentity;
import dev.tandem.router.VertxRouterLoop;
import dev.tandem.router.WorkerViews;
import dev.tandem.router.scheduling.RoutedPrefixTrees;
import dev.tandem.router.scheduling.SchedulingObserver;
import dev.tandem.upstream.TokenizeService;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import java.util.function.Consumer;
import java.util.logging.Logger;

/**
 * A router node, wired: the cluster state it shares (registry, affinity, ids, replica loads), the
 * {@link RequestRouter} that runs each request, the token address every decode worker streams to, the
 * HTTP API, the client bridges and the console feed. All of it on one event loop, so request state
 * needs no locks.
 */
public final class RouterVerticle extends VerticleBase {
    private static final Logger LOG = Logger.getLogger(RouterVerticle.class.getName());
    /** How often the web console's cluster view refreshes while someone watches. */
    private static final long CONSOLE_PERIOD_MS = 1000;
    /** How often the served models are checked against the registry, besides every join and departure. */
    private static final long CATALOG_PERIOD_MS = 1000;

    private final TandemConfig config;
    private final ModelCatalog.Local localModel;
    private final ClusterNode node;
    private final NodeMetrics nodeMetrics;
    private final MemoryBudget memory;
    private final HazelcastInstance hazelcast;
    private final String routerId;
    private final String nodeId;
    private WorkerDirectory directory;
    private RouterLoadBoard loadBoard;
    private PrefixIndex prefixIndex;
    private LoadReporter loadReporter;
    private final java.util.List<Long> timers = new java.util.ArrayList<>();
    private ModelCatalog catalog;
    private io.vertx.core.Handler<io.vertx.ext.web.RoutingContext> metricsHandler;
    private WorkerViews workers;
    private RequestRouter requests;
    private HttpServer server;
    private HttpListeners listeners;
    private ClientBridges bridge;
    private ConsoleFeed consoleFeed;

    public RouterVerticle(
            TandemConfig config,
            ModelCatalog.Local localModel,
            ClusterNode node,
            NodeMetrics nodeMetrics,
            MemoryBudget memory,
            String routerId) {
        this.nodeMetrics = nodeMetrics;
        this.memory = memory;
        this.config = config;
        this.localModel = localModel;
        this.node = node;
        this.hazelcast = node.hazelcast();
        this.routerId = routerId;
        this.nodeId = node.nodeId();
    }

    @Override
    public Future<?> start() {
        // Creating Hazelcast proxies (maps, near cache, id generator) may wait on the cluster: not here.
        return vertx.executeBlocking(() -> new Shared(
                        new WorkerDirectory(vertx, hazelcast, node.registrySeal()),
                        new AffinityStore(hazelcast, context),
                        new RequestIdSource(vertx, hazelcast),
                        new TokenizerStore(hazelcast),
                        new HazelcastTenantQuotas(
                                hazelcast, context, config.flowControl().quotaTimeoutMs())))
                .compose(this::startWith);
    }

    private record Shared(
            WorkerDirectory directory,
            SessionAffinity affinity,
            RequestIds ids,
            TokenizerStore tokenizers,
            TenantQuotas quotas) {}

    private Future<?> startWith(Shared shared) {
        directory = shared.directory();
        RouterSettings settings = config.router();
        loadBoard = new RouterLoadBoard(vertx, context, hazelcast, routerId, settings.loadReportTtlMs());
        LoadTracker loads = new LoadTracker();
        ModelSchedulers pairs = wireScheduling(shared.tokenizers(), loads);
        RouterMetrics metrics = new RouterMetrics(nodeMetrics.registry());
        wireRequests(shared, pairs, loads, metrics);
        Future<Void> tokens =
                consume(Addresses.routerTokens(routerId), TokenBatch.CODEC, requests::onTokenBatch, "token batch");
        Future<Void> firstTokens =
                consume(Addresses.routerFirstTokens(routerId), FirstToken.CODEC, requests::onFirstToken, "first token");
        return Future.all(directory.start(), tokens, firstTokens, loadBoard.start(), prefixIndex.start())
                .onSuccess(v -> loadReporter.start())
                .onSuccess(v -> catalog.refresh())
                .compose(v -> serveClients(metrics));
    }

    /**
     * What scheduling sees: the prefix index, the workers with every replica's load, the models served and
     * one scheduler per model over that model's workers only. The policy says what scheduling learns
     * prefixes from: the index (and local prefill), or the profiles' own routed-prefix trees (cache-aware),
     * which a departed worker leaves.
     */
    private ModelSchedulers wireScheduling(TokenizerStore tokenizers, LoadTracker loads) {
        // Which worker caches which prompt block, from the workers' KV cache events.
        prefixIndex = new PrefixIndex(
                vertx, context, memory.prefixIndexEntries(), config.router().lowerTierHitFraction());
        directory.onRemoved(workerId -> context.runOnContext(v -> prefixIndex.forgetWorker(workerId)));
        SchedulingMetrics scheduling = new SchedulingMetrics(nodeMetrics.registry());
        directory.onRemoved(scheduling::forget);
        // Least-loaded counts every replica's dispatches: ours as they happen, the others' from their reports.
        workers = new WorkerViews(
                directory::workers,
                w -> loads.inFlight(w) + loadBoard.othersInFlight(w),
                w -> loads.prefillTokens(w) + loadBoard.othersPrefillTokens(w));
        // The models served: learned from the registry, tokenizers from the cluster's store.
        catalog = new ModelCatalog(
                directory::all,
                // Upstream models' tokenizers ask the model's workers, which ask their GPU servers.
                identity -> vertx.executeBlocking(
                        () -> TokenizeService.onEventBus(vertx, tokenizers.fetch(identity)), false),
                java.util.List.of(localModel),
                memory.tokenizerBytes());
        SchedulingObserver observer = SchedulingObserver.of(scheduling::pluginTimed, scheduling::chosen);
        var trees = new RoutedPrefixTrees.Allowance(memory.routedTreeBlocks());
        ModelSchedulers pairs = new ModelSchedulers(model -> PairScheduler.forSettings(
                config.router(),
                role -> workers.of(role, model::servedBy),
                observer,
                prefixIndex::leadingBlocks,
                trees));
        catalog.onDropped(pairs::forgetModel);
        directory.onRemoved(workerId -> context.runOnContext(v -> pairs.forgetWorker(workerId)));
        directory.onAdded(workerId -> context.runOnContext(v -> catalog.refresh()));
        directory.onRemoved(workerId -> context.runOnContext(v -> catalog.refresh()));
        timers.add(vertx.setPeriodic(CATALOG_PERIOD_MS, t -> catalog.refresh()));
        return pairs;
    }

    /** The request router over the schedulers, its meters, load reports and stall checks. */
    private void wireRequests(Shared shared, ModelSchedulers pairs, LoadTracker loads, RouterMetrics metrics) {
        RouterSettings settings = config.router();
        var scaling = new RouterScaling(config.scaling(), directory::all, loadBoard::reports, nodeMetrics.registry());
        requests = RequestRouter.builder()
                .loop(new VertxRouterLoop(context))
                .dispatcher(new EventBusDispatcher(
                        vertx.eventBus(), settings.prefillTimeoutMs(), settings.decodeStartTimeoutMs()))
                .scheduling(pairs, loads)
                .shared(shared.affinity(), shared.ids())
                .metrics(metrics)
                .tracer(node.tracer())
                .scaling(scaling.tokens())
                .settings(settings, new RouterIdentity(routerId, nodeId))
                .flowControl(
                        config.flowControl(),
                        shared.quotas(),
                        new FlowMetrics(
                                nodeMetrics.registry(), config.flowControl().maxTenantLabels()))
                .build();
        metrics.inFlight(requests::admitted);
        metrics.prefixIndex(
                prefixIndex::entries,
                prefixIndex::workers,
                prefixIndex::lastEventLagMillis,
                prefixIndex::snapshots,
                prefixIndex::gaps,
                prefixIndex::dropped);
        RegistryGauges gauges = new RegistryGauges(nodeMetrics.registry(), directory::all, directory::get);
        var scrape = nodeMetrics.scrapeHandler();
        metricsHandler = ctx -> {
            gauges.refresh();
            scaling.sample(System.nanoTime()); // current at every scrape, not up to a period old
            scrape.handle(ctx);
        };
        loadReporter =
                new LoadReporter(vertx, context, routerId, nodeId, loads, requests::admitted, settings.loadReportMs());
        loadReporter.tokenRates(scaling::ownRates);
        timers.add(vertx.setPeriodic(
                Math.max(50, Math.min(1000, settings.decodeStallTimeoutMs() / 4)),
                t -> requests.moveStalled(directory::lastProgressNanos)));
        timers.add(vertx.setPeriodic(scaling.periodMs(), t -> scaling.sample(System.nanoTime())));
        // A worker that leaves hands its requests to others; the listener runs on a Hazelcast thread.
        directory.onRemoved(workerId -> context.runOnContext(v -> requests.onWorkerGone(workerId)));
    }

    /** The client bridges, then HTTP (the SockJS bridge is mounted on the HTTP routes). */
    private Future<HttpServer> serveClients(RouterMetrics metrics) {
        OpenAiRequestParser parser =
                new OpenAiRequestParser(catalog, config.router().defaultMaxTokens());
        var http = config.http();
        return ClientBridges.start(
                        vertx,
                        config.bridge(),
                        parser,
                        requests,
                        new ApiKeys(http.apiKeys()),
                        config.router().requestTimeoutMs())
                .onSuccess(b -> bridge = b)
                .compose(b -> {
                    RequestReadTimeout readTimeout = new RequestReadTimeout(vertx, http.requestReadTimeoutMs());
                    listeners = new HttpListeners(vertx, http);
                    return listeners
                            .listen(
                                    Http2Refusal.guard(readTimeout::onConnection),
                                    readTimeout.wrap(HttpProtocolErrors.guard(httpRoutes(parser, metrics))))
                            .recover(e -> b.stop().transform(v -> Future.failedFuture(e)));
                })
                .onSuccess(s -> server = s);
    }

    /** The OpenAI API and operations routes, then the SockJS bridge and the web console. */
    private io.vertx.ext.web.Router httpRoutes(OpenAiRequestParser parser, RouterMetrics metrics) {
        var http = config.http();
        io.vertx.ext.web.Router routes = HttpApi.create(
                vertx,
                http,
                parser,
                new Tenants(http.keys(), config.flowControl()),
                requests,
                catalog,
                directory,
                () -> loadBoard.view(loadReporter.current()),
                metricsHandler,
                new OpsRoutes.Check("cluster", node::notJoined),
                new OpsRoutes.Check("workers", this::missingWorkers),
                new OpsRoutes.Check("admitting", () -> requests.stopping() ? "shutting down" : null));
        if (config.bridge().sockjs()) {
            consoleFeed = new ConsoleFeed(
                    vertx,
                    routerId,
                    new ConsoleFeed.Sources(
                            workers::of,
                            loadReporter::current,
                            loadBoard::reports,
                            requests::admitted,
                            metrics::requestsEnded,
                            metrics::affinityHits,
                            metrics::affinityMisses),
                    CONSOLE_PERIOD_MS);
            bridge.mountSockJs(
                    vertx,
                    routes,
                    http.maxBodyBytes(),
                    new ApiKeys(http.apiKeys()),
                    consoleFeed,
                    config.bridge().sockjsAllowedOrigins());
        }
        ConsoleRoutes.mount(routes);
        return routes;
    }

    /**
     * Before a shutdown: refuse new requests (and report unready, so a load balancer stops sending),
     * then wait until the running ones end or {@code timeoutMs} passes. Call from any thread.
     */
    public Future<Void> drainForShutdown(long timeoutMs) {
        return ShutdownDrain.run(context, requests::stopAdmitting, () -> requests.admitted() == 0, timeoutMs);
    }

    /** Why this router cannot serve yet (no prefill or no decode worker registered), or null. */
    private String missingWorkers() {
        int prefill = directory.workers(dev.tandem.protocol.WorkerRole.PREFILL).size();
        int decode = directory.workers(dev.tandem.protocol.WorkerRole.DECODE).size();
        return prefill > 0 && decode > 0
                ? null
                : "registered workers: " + prefill + " prefill, " + decode + " decode; at least one of each is needed";
    }

    @Override
    public Future<?> stop() {
        timers.forEach(vertx::cancelTimer);
        if (loadReporter != null) {
            loadReporter.stop();
        }
        if (consoleFeed != null) {
            consoleFeed.stop();
        }
        Future<Void> board = loadBoard == null ? Future.succeededFuture() : loadBoard.stop();
        Future<Void> index = prefixIndex == null ? Future.succeededFuture() : prefixIndex.stop();
        Future<Void> dir = directory == null ? Future.succeededFuture() : directory.stop();
        Future<Void> clients = bridge == null ? Future.succeededFuture() : bridge.stop();
        if (listeners != null) {
            listeners.stop();
        }
        return Future.all(board, index, dir, clients);
    }

    /** The port HTTP listens on (the configured one, or the one the OS chose for port 0). */
    public int httpPort() {
        return server.actualPort();
    }

    /** The HTTP listeners (TLS, {@code http.plain-port}, connection counts); null before start. */
    public HttpListeners httpListeners() {
        return listeners;
    }

    /** The client event-bus bridge when it has a TCP listener, or null when {@code bridge.tcp-port} is -1. */
    public ClientBridges bridge() {
        return config.bridge().tcpEnabled() ? bridge : null;
    }

    /** The client event-bus bridges (consumers, TCP and SockJS connections), whatever listens; null before start. */
    public ClientBridges clientBridge() {
        return bridge;
    }

    public String routerId() {
        return routerId;
    }

    public WorkerDirectory directory() {
        return directory;
    }

    public RequestRouter requests() {
        return requests;
    }

    /** The event loop everything of this router runs on (tests query the prefix index there). */
    public io.vertx.core.Context context() {
        return context;
    }

    /** Which worker's KV caches hold which prompt block; read it on this verticle's context. Null before start. */
    public PrefixIndex prefixIndex() {
        return prefixIndex;
    }

    /** The models this router serves (learned from the registry); null before start. */
    public ModelCatalog models() {
        return catalog;
    }

    /** A consumer of JSON messages from workers: a malformed one is dropped with a warning, nothing else. */
    private <T> Future<Void> consume(String address, JsonCodec<T> codec, Consumer<T> handler, String what) {
        return vertx.eventBus()
                .<Object>consumer(address, m -> {
                    try {
                        handler.accept(codec.decode(JsonCodec.object(m.body())));
                    } catch (ProtocolException e) {
                        LOG.warning("dropping malformed " + what + ": " + e.getMessage());
                    }
                })
                .completion();
    }
}
