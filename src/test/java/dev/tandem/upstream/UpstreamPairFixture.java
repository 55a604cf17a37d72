package dev.tandem.upstream;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

/**
 * One prefill and one decode worker of engine {@code openai}, each fronting its own fake of
 * {@code kind}, behind a router: started once per test class, with what the fakes received forgotten
 * before each test, so each test asserts only on its own requests.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class UpstreamPairFixture {
    private final FakeUpstream.Kind kind;
    private final String suffix;
    UpstreamCluster cluster;
    FakeUpstream prefill;
    FakeUpstream decode;

    /** Workers are named {@code prefill-<suffix>} and {@code decode-<suffix>}. */
    UpstreamPairFixture(FakeUpstream.Kind kind, String suffix) {
        this.kind = kind;
        this.suffix = suffix;
    }

    @BeforeAll
    void start() {
        cluster = new UpstreamCluster(kind);
        prefill = cluster.fake(true);
        decode = cluster.fake(false);
        cluster.worker(prefill, "prefill-" + suffix);
        cluster.worker(decode, "decode-" + suffix);
        cluster.awaitModel();
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void forget() {
        prefill.received.clear();
        decode.received.clear();
    }

    /** The token ids the fakes see for {@code text}. */
    static JsonArray prompt(String text) {
        return FakeUpstream.ids(FakeVocabulary.encode(text, true));
    }

    /** A greedy completion of "The capital of France:", with a seed so the fakes see it passed on. */
    HttpResponse<String> complete(int maxTokens, int seed) {
        return cluster.http.post(
                "/v1/completions",
                new JsonObject()
                        .put("model", FakeUpstream.MODEL)
                        .put("prompt", "The capital of France:")
                        .put("max_tokens", maxTokens)
                        .put("temperature", 0)
                        .put("seed", seed)
                        .encode());
    }

    /** A greedy streamed chat of one user message. */
    HttpResponse<String> chat(String content, int maxTokens, int seed) {
        return cluster.http.post(
                "/v1/chat/completions",
                new JsonObject()
                        .put("model", FakeUpstream.MODEL)
                        .put(
                                "messages",
                                new JsonArray()
                                        .add(new JsonObject()
                                                .put("role", "user")
                                                .put("content", content)))
                        .put("max_tokens", maxTokens)
                        .put("temperature", 0)
                        .put("seed", seed)
                        .put("stream", true)
                        .encode());
    }
}
