package dev.tandem.bench;

import dev.tandem.bench.upstream.SimVllmServer;
import dev.tandem.config.KvEventsSettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.UpstreamSettings;
import dev.tandem.engine.sim.SimProfile;
import dev.tandem.engine.sim.SimProfiles;
import dev.tandem.engine.tokenizer.ByteTokenizer;
import dev.tandem.node.TandemNode;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code bench route --via upstream}: the path a GPU deployment takes. Every sim worker becomes a sim
 * vLLM instance ({@link SimVllmServer}: vLLM's HTTP API, the P/D flow with {@code kv_transfer_params},
 * KV events over ZeroMQ in vLLM's format and its own hash scheme), and a Tandem upstream worker — its
 * own node, as in a deployment where each worker runs beside its engine — fronts each one. The routers
 * know the prefill engines' caches only from those events, mapped back to Tandem's blocks.
 */
final class ViaUpstreamCluster implements BenchCluster {
    /** The model the sim instances serve: not the sim engine's own name, which the routers may also load. */
    static final String MODEL_PREFIX = "sim-vllm/";

    private final Vertx engines = Vertx.vertx();
    private final List<SimVllmServer> servers = new ArrayList<>();
    private final List<TandemNode> workers = new ArrayList<>();
    private final List<TandemNode> routers = new ArrayList<>();
    private final String model;

    private ViaUpstreamCluster(String model) {
        this.model = model;
    }

    static ViaUpstreamCluster start(SimCluster.Shape shape, String policy) {
        SimProfile profile = SimProfiles.named(shape.profile());
        ViaUpstreamCluster cluster = new ViaUpstreamCluster(MODEL_PREFIX + profile.name());
        try {
            cluster.startAll(shape, policy, profile);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    private void startAll(SimCluster.Shape shape, String policy, SimProfile profile) {
        TandemConfig config = SimCluster.config(shape, policy);
        for (int r = 0; r < shape.routers(); r++) {
            routers.add(TandemNode.start(config, new TandemNode.Plan(true, List.of(), List.of())));
        }
        List<java.util.concurrent.Callable<TandemNode>> starts = new ArrayList<>();
        for (int i = 1; i <= shape.prefill(); i++) {
            SimVllmServer s = SimVllmServer.prefill(
                    engines,
                    "prefill-" + i,
                    model,
                    profile,
                    shape.timeScale(),
                    shape.blockSize(),
                    shape.prefixCacheBytes());
            servers.add(s);
            KvEventsSettings events = new KvEventsSettings(s.kvEventsEndpoint(), s.kvEventsReplayEndpoint(), "");
            TandemConfig c = withUpstream(config, upstream(s.url(), shape).withKvEvents(events));
            String id = "prefill-" + i;
            starts.add(() -> TandemNode.start(c, new TandemNode.Plan(false, List.of(id), List.of())));
        }
        for (int i = 1; i <= shape.decode(); i++) {
            SimVllmServer s = SimVllmServer.decode(engines, "decode-" + i, model, profile, shape.timeScale(), 256);
            servers.add(s);
            TandemConfig c = withUpstream(config, upstream(s.url(), shape));
            String id = "decode-" + i;
            starts.add(() -> TandemNode.start(c, new TandemNode.Plan(false, List.of(), List.of(id))));
        }
        startWorkers(starts);
        for (TandemNode router : routers) {
            SimCluster.awaitWorkers(router, shape.prefill(), shape.decode());
            awaitModel(router.router().httpPort());
        }
    }

    /** Worker nodes join a few at a time: each is a Hazelcast member, and joins are slow one by one. */
    private void startWorkers(List<java.util.concurrent.Callable<TandemNode>> starts) {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<TandemNode>> started = pool.invokeAll(starts);
            RuntimeException failure = null;
            for (Future<TandemNode> f : started) {
                try {
                    workers.add(f.get());
                } catch (java.util.concurrent.ExecutionException e) {
                    failure = new IllegalStateException("an upstream worker did not start: " + e.getCause(), e);
                }
            }
            if (failure != null) {
                throw failure;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the workers", e);
        } finally {
            pool.shutdown();
        }
    }

    private static TandemConfig withUpstream(TandemConfig config, UpstreamSettings upstream) {
        return config.withModel(config.model().withUpstream(upstream));
    }

    /**
     * Deadlines past the replay's longest queue; the engine polled as often as sim workers
     * report their load (in trace time); the vocabulary's size given, as an operator may.
     */
    private static UpstreamSettings upstream(String url, SimCluster.Shape shape) {
        return new UpstreamSettings(
                url,
                UpstreamSettings.VLLM,
                // Past the longest prefill queue here (about 20 s of wall clock), short enough that a lost call
                // during a worker's start is retried rather than waited on.
                60_000,
                SimCluster.scaledPeriod(250, shape.timeScale()),
                60_000,
                ByteTokenizer.VOCAB_SIZE,
                "",
                8998);
    }

    /** Waits until the router's {@code /v1/models} lists the instances' model (its workers announced it). */
    private void awaitModel(int port) {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            try {
                String body = http.send(
                                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/models"))
                                        .timeout(Duration.ofSeconds(5))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body();
                if (body.contains("\"" + model + "\"")) {
                    return;
                }
            } catch (java.io.IOException e) {
                // not listening yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the model", e);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the router did not list " + model + " within 60 s");
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the model", e);
            }
        }
    }

    @Override
    public List<Integer> httpPorts() {
        return routers.stream().map(n -> n.router().httpPort()).toList();
    }

    @Override
    public String model() {
        return model;
    }

    @Override
    public long kvBytesMoved() {
        return SimCluster.kvBytesMoved(routers);
    }

    @Override
    public long localPrefills() {
        return SimCluster.localPrefills(routers);
    }

    @Override
    public String timings(double timeScale) {
        return "(via upstream: the sim vLLM instances keep no Tandem worker timers)";
    }

    @Override
    public void close() {
        List<io.vertx.core.Future<Void>> closing = new ArrayList<>();
        for (TandemNode n : routers) {
            closing.add(n.close());
        }
        for (TandemNode n : workers) {
            closing.add(n.close());
        }
        for (io.vertx.core.Future<Void> f : closing) {
            f.await();
        }
        servers.forEach(SimVllmServer::close);
        engines.close().await();
    }
}
