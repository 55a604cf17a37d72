package dev.tandem.bridge.worker;

import com.hazelcast.core.HazelcastInstance;
import dev.tandem.bridge.BridgeFrames;
import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.config.WorkerBridgeSettings;
import dev.tandem.config.WorkerSettings;
import dev.tandem.protocol.WorkerWelcome;
import dev.tandem.router.ServedModel;
import dev.tandem.router.ServedModels;
import dev.tandem.security.RegistrySeal;
import dev.tandem.security.TcpListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * The worker bridge: a TCP event-bus bridge (Vert.x TCP bridge framing) through which processes in
 * other languages — where GPU engines live — join the cluster as prefill or decode workers and speak
 * the Java workers' protocol (src/site/markdown/worker-bridge.md). Each joined worker is registered from this
 * node, heartbeated while its connection lives and withdrawn the moment it closes or goes silent.
 * Deployed on router nodes when {@code worker-bridge.tcp-port} is not -1; one event loop runs it all.
 */
public final class WorkerBridge extends VerticleBase {
    private static final Logger LOG = Logger.getLogger(WorkerBridge.class.getName());
    private final WorkerBridgeSettings settings;
    private final WorkerSettings workerSettings;
    private final HazelcastInstance hazelcast;
    private final String nodeId;
    private final ServedModels models;
    private final Set<WorkerBridgeConnection> connections = new HashSet<>();
    /** Worker ids joined (or joining) here: one connection per id. */
    private final Set<String> ids = new HashSet<>();

    private final MeterRegistry registry;
    /** SHA-256 of worker-bridge.token, or null when none is set. */
    private final byte[] tokenDigest;

    private final JoinGuard joinGuard;

    private TcpListener server;
    private final RegistrySeal registrySeal;
    private long sweepTimer = -1;

    public WorkerBridge(
            WorkerBridgeSettings settings,
            WorkerSettings workerSettings,
            HazelcastInstance hazelcast,
            String nodeId,
            RegistrySeal registrySeal,
            ServedModels models,
            MeterRegistry registry) {
        this.registrySeal = registrySeal;
        this.registry = registry;
        this.settings = settings;
        this.workerSettings = workerSettings;
        this.hazelcast = hazelcast;
        this.nodeId = nodeId;
        this.models = models;
        this.tokenDigest = settings.token().isEmpty() ? null : sha256(settings.token());
        this.joinGuard =
                new JoinGuard(settings.failedJoins(), registry, () -> TimeUnit.NANOSECONDS.toMillis(System.nanoTime()));
    }

    @Override
    public Future<?> start() {
        String refusal = settings.refusal();
        if (refusal != null) {
            return Future.failedFuture(new IllegalStateException(refusal));
        }
        if (settings.token().isEmpty()) {
            LOG.warning("the worker bridge on " + settings.host() + " has NO join token (worker-bridge.allow-no-token):"
                    + " any local process can join as a worker and read prompts; for development only");
        }
        // Read off the event loop by the scraper: a racy size is fine for a gauge.
        Gauge.builder("tandem.worker.bridge.connections", connections, Set::size)
                .description("open worker bridge connections")
                .register(registry);
        Gauge.builder("tandem.worker.bridge.workers", this, WorkerBridge::workers)
                .description("external workers joined over this node's worker bridge")
                .register(registry);
        server = new TcpListener(vertx, "worker-bridge", settings.tls(), settings.connections());
        // A worker that stops talking (hung process, half-open socket) is dropped like one whose heartbeat stopped.
        sweepTimer = vertx.setPeriodic(
                Math.max(50, Math.min(idleTimeoutMs(), settings.frameReadTimeoutMs()) / 4), id -> closeIdle());
        return server.listen(
                        settings.host(),
                        settings.tcpPort(),
                        socket -> {
                            WorkerBridgeConnection connection = new WorkerBridgeConnection(this, socket);
                            connections.add(connection);
                            connection.start();
                        },
                        reason -> BridgeFrames.encode(BridgeFrames.err("too_many_connections", reason, null)))
                .recover(e -> Future.failedFuture(new IllegalStateException(
                        "the worker bridge cannot listen on " + settings.host() + ":" + settings.tcpPort()
                                + " (worker-bridge.tcp-port): " + e.getMessage(),
                        e)));
    }

    @Override
    public Future<?> stop() {
        vertx.cancelTimer(sweepTimer);
        // Withdrawn from the registry before the node leaves the cluster, or routers would keep choosing
        // them until their entries expire.
        List<Future<Void>> left = new ArrayList<>();
        for (WorkerBridgeConnection c : new ArrayList<>(connections)) {
            left.add(c.leave());
            c.close("shutting_down", "the node is shutting down");
        }
        return Future.join(left).eventually(() -> server == null ? Future.succeededFuture() : server.close());
    }

    /** The port it listens on (the configured one, or the one the OS chose for 0). */
    public int port() {
        return server.port();
    }

    /** External workers joined here now. */
    public int workers() {
        return (int) List.copyOf(connections).stream()
                .filter(c -> c.workerId() != null)
                .count();
    }

    /** A router's cluster member left: its work on external workers is dropped, as on Java workers. */
    public void onRouterNodeLeft(String leftNode) {
        context.runOnContext(v -> connections.forEach(c -> c.routerNodeLeft(leftNode)));
    }

    private void closeIdle() {
        long limit = TimeUnit.MILLISECONDS.toNanos(idleTimeoutMs());
        long now = System.nanoTime();
        for (WorkerBridgeConnection c : new ArrayList<>(connections)) {
            // A frame trickling in keeps a connection from idling, not for ever: frame-read-timeout-ms bounds it.
            if (c.socket().closeIfTimedOut(now, 0, settings.frameReadTimeoutMs())) {
                continue;
            }
            if (now - c.socket().lastFrameNanos() > limit) {
                c.close(
                        "idle_timeout",
                        "no frame for " + idleTimeoutMs() + " ms: heartbeat every " + heartbeatMs() + " ms");
            }
        }
    }

    /**
     * Does a join's token match {@code worker-bridge.token}? Compared over SHA-256 digests in constant time,
     * so neither the content nor the length leaks through timing. Without a configured token (development
     * on loopback only, {@link WorkerBridgeSettings#refusal}) every join passes.
     */
    boolean tokenAccepted(String given) {
        if (tokenDigest == null) {
            return true;
        }
        return given != null && MessageDigest.isEqual(tokenDigest, sha256(given));
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** A frame refused with {@code code} (a small fixed set: the err frames' codes). */
    void refused(String code) {
        Counter.builder("tandem.worker.bridge.refused")
                .tag("code", code)
                .description("worker bridge frames refused, by err code")
                .register(registry)
                .increment();
    }

    Vertx vertx() {
        return vertx;
    }

    JoinGuard joinGuard() {
        return joinGuard;
    }

    WorkerBridgeSettings settings() {
        return settings;
    }

    String nodeId() {
        return nodeId;
    }

    /** What a worker of that model must agree with, or null when this router cannot tokenize for it. */
    WorkerWelcome.ModelSpec model(String name) {
        ServedModel m = models.known(name);
        return m == null ? null : ModelSpecs.of(m);
    }

    /** The models workers may join as, for refusals. */
    java.util.List<String> modelNames() {
        return models.listed().stream().map(ServedModel::name).toList();
    }

    long heartbeatMs() {
        return workerSettings.heartbeatMs();
    }

    /** As long as a Java worker's registry entry outlives a missed heartbeat. */
    long idleTimeoutMs() {
        return workerSettings.registryTtlMs();
    }

    /** How long a KV hand-over may wait for the decode worker's ack, as for Java prefill workers. */
    long kvReplyTimeoutMs() {
        return workerSettings.kvParkTimeoutMs();
    }

    WorkerAnnouncer announcer() {
        return new WorkerAnnouncer(
                vertx, hazelcast, registrySeal, workerSettings.heartbeatMs(), workerSettings.registryTtlMs());
    }

    boolean claimId(String id) {
        return ids.add(id);
    }

    void releaseId(String id) {
        ids.remove(id);
    }

    void connectionClosed(WorkerBridgeConnection connection) {
        connections.remove(connection);
    }
}
