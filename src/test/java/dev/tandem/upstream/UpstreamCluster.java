package dev.tandem.upstream;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.UpstreamSettings;
import dev.tandem.node.TandemNode;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;

/**
 * A loopback Tandem cluster in front of fake GPU servers: a router node that loaded no model of the
 * upstream's, and a node per worker of engine {@code openai}, each fronting its own fake.
 */
final class UpstreamCluster implements AutoCloseable {
    final Vertx fakes = Vertx.vertx();
    final TandemConfig config;
    final TandemNode router;
    final HttpTestClient http;
    private final List<TandemNode> workers = new ArrayList<>();
    private final List<FakeUpstream> servers = new ArrayList<>();
    private final FakeUpstream.Kind kind;

    UpstreamCluster(FakeUpstream.Kind kind) {
        this(kind, TestNodes.config());
    }

    /** The same, every node configured by {@code config} (tracing, say). */
    UpstreamCluster(FakeUpstream.Kind kind, TandemConfig config) {
        this.kind = kind;
        this.config = config;
        router = TandemNode.start(config, new TandemNode.Plan(true, List.of(), List.of()));
        http = new HttpTestClient(router.router().httpPort());
    }

    FakeUpstream fake(boolean prefillMode) {
        FakeUpstream f = new FakeUpstream(fakes, kind, prefillMode).start();
        servers.add(f);
        return f;
    }

    /**
     * The settings of a worker fronting {@code url}: short deadlines, so failures show fast; the start
     * waits long enough to ask {@code /v1/models} again after a call lost on a loaded machine.
     */
    UpstreamSettings upstream(String url) {
        return upstream(url, 15_000);
    }

    UpstreamSettings upstream(String url, long startTimeoutMs) {
        return new UpstreamSettings(
                url,
                kind == FakeUpstream.Kind.VLLM ? UpstreamSettings.VLLM : UpstreamSettings.SGLANG,
                2_000,
                50,
                startTimeoutMs,
                0,
                "",
                8998);
    }

    TandemNode worker(FakeUpstream upstream, String id) {
        return worker(upstream(upstream.url()), id, upstream.prefillMode);
    }

    TandemNode worker(UpstreamSettings upstream, String id, boolean prefill) {
        return worker(upstream, id, prefill, "");
    }

    /** A worker given {@code tokenizer} (model.tokenizer: a file or model directory; "" for none). */
    TandemNode worker(UpstreamSettings upstream, String id, boolean prefill, String tokenizer) {
        TandemConfig c = config.withModel(config.model().withUpstream(upstream).withTokenizer(tokenizer));
        TandemNode node = TandemNode.start(
                c, new TandemNode.Plan(false, prefill ? List.of(id) : List.of(), prefill ? List.of() : List.of(id)));
        workers.add(node);
        return node;
    }

    void awaitModel() {
        TestNodes.awaitTrue(
                () -> http.modelIds().contains(FakeUpstream.MODEL), "/v1/models to list " + FakeUpstream.MODEL);
    }

    @Override
    public void close() {
        for (TandemNode w : workers) {
            w.close().await();
        }
        router.close().await();
        servers.forEach(FakeUpstream::stop);
        fakes.close().await();
    }
}
