package dev.tandem.node;

import dev.tandem.cluster.TokenizerStore;
import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.config.TandemConfig;
import dev.tandem.metrics.WorkerMetrics;
import dev.tandem.upstream.UpstreamClient;
import dev.tandem.upstream.UpstreamDiscovery;
import dev.tandem.upstream.UpstreamModel;
import dev.tandem.worker.upstream.UpstreamDecodeVerticle;
import dev.tandem.worker.upstream.UpstreamPrefillVerticle;
import dev.tandem.worker.upstream.UpstreamWorkerSetup;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A node's workers of engine {@code openai}: each fronts the configured upstream server. The model is
 * learned from the upstream once, before any of them registers (blocking: the node's start thread).
 */
final class UpstreamWorkers {
    private final List<UpstreamPrefillVerticle> prefill = new ArrayList<>();
    private final List<UpstreamDecodeVerticle> decode = new ArrayList<>();
    private UpstreamModel model;

    /** Learns the model and deploys the plan's workers; throws, naming the upstream, when it cannot be reached. */
    Future<Void> deploy(
            Vertx vertx,
            TandemConfig config,
            TandemNode.Plan plan,
            TokenizerStore tokenizers,
            String nodeId,
            Supplier<WorkerAnnouncer> announcer,
            Function<String, WorkerMetrics> metrics) {
        if (plan.prefillWorkerIds().isEmpty() && plan.decodeWorkerIds().isEmpty()) {
            return Future.succeededFuture();
        }
        UpstreamClient discovery = new UpstreamClient(
                vertx, UpstreamDiscovery.callSettings(config.model().upstream()));
        try {
            model = UpstreamDiscovery.learn(discovery, config.model());
        } finally {
            discovery.close();
        }
        tokenizers.publish(model.tokenizerIdentity(), model.tokenizer());
        List<Future<String>> deployed = new ArrayList<>();
        UpstreamWorkerSetup setup =
                new UpstreamWorkerSetup(model, config.model().upstream(), config.worker(), announcer, nodeId, metrics);
        for (String id : plan.prefillWorkerIds()) {
            UpstreamPrefillVerticle w = new UpstreamPrefillVerticle(id, setup);
            prefill.add(w);
            deployed.add(vertx.deployVerticle(w));
        }
        for (String id : plan.decodeWorkerIds()) {
            UpstreamDecodeVerticle w = new UpstreamDecodeVerticle(id, setup);
            decode.add(w);
            deployed.add(vertx.deployVerticle(w));
        }
        return Future.all(deployed).mapEmpty();
    }

    /** The model learned from the upstream (null before {@link #deploy}, or with no worker). */
    UpstreamModel model() {
        return model;
    }

    void routerNodeLeft(String nodeId) {
        prefill.forEach(w -> w.onRouterNodeLeft(nodeId));
        decode.forEach(w -> w.onRouterNodeLeft(nodeId));
    }

    void drainForShutdown(long drainMs, List<Future<Void>> drained) {
        prefill.forEach(w -> drained.add(w.drainForShutdown(drainMs)));
        decode.forEach(w -> drained.add(w.drainForShutdown(drainMs)));
    }
}
