package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.engine.Engine;
import dev.tandem.engine.gguf.GgmlType;
import dev.tandem.engine.gguf.GgufModel;
import dev.tandem.engine.gguf.LlamaCpp;
import dev.tandem.engine.gguf.ModelShape;
import dev.tandem.engine.gguf.RandomGgufModel;
import dev.tandem.it.TandemCluster.Node;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A GGUF model served by a cluster of separate JVMs (router, prefill, two decode workers): the streamed
 * greedy continuation is llama.cpp's own (node-llama-cpp on the same file), a repeated prompt reports
 * cached tokens, and a decode worker killed mid-stream changes no token of any stream.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class GgufClusterIT extends ClusterIT {
    private static final String PROMPT =
            "Once upon a time, a little robot named Tandem wanted to learn how to paint the sea at night.";
    private static final int TOKENS = 48;

    private TandemProcess router;
    private TandemProcess decode1;
    private Path model;
    private String name;
    private int[] prompt;
    private int[] expected;
    private String expectedText;
    private long fingerprint;

    @BeforeAll
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void start() throws Exception {
        model = Path.of("target/it-models/gguf-cluster.gguf").toAbsolutePath();
        Files.createDirectories(model.getParent());
        new RandomGgufModel(
                        ModelShape.SMOLLM2_135M.scaled(4, 4096, 4096),
                        GgmlType.F16,
                        dev.tandem.engine.gguf.TestVocabularies.named("spm-test"),
                        31)
                .write(model);
        Engine engine = GgufModel.load(model, 16);
        name = engine.info().name();
        fingerprint = engine.info().fingerprint();
        prompt = engine.tokenizer().encode(PROMPT, true);
        expected = LlamaCpp.ints(LlamaCpp.ask(new JsonObject()
                        .put("model", model.toString())
                        .put(
                                "greedy",
                                new JsonObject()
                                        .put("prompt", LlamaCpp.array(prompt))
                                        .put("n", TOKENS)))
                .getJsonArray("greedy"));
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        int previous = prompt[prompt.length - 1];
        for (int t : expected) {
            text.writeBytes(engine.tokenizer().decode(previous, t));
            previous = t;
        }
        expectedText = text.toString(StandardCharsets.UTF_8);
        cluster = new TandemCluster(
                GgufClusterIT.class,
                Map.of(
                        "model.path", model.toString(),
                        "worker.heartbeat-ms", 100,
                        "worker.registry-ttl-ms", 3000,
                        // 40 ms a step: a stream lasts about 2 s, long enough to be hit.
                        "model.emulated-decode-step-us", 40_000));
        List<TandemProcess> nodes = cluster.start(
                Node.prefill("prefill-1"), Node.decode("decode-1"), Node.decode("decode-2"), Node.router("router"));
        decode1 = nodes.get(1);
        router = nodes.get(3);
        cluster.awaitWorkers(router, 1, 2);
    }

    private JsonObject request(boolean stream) {
        return new JsonObject()
                .put("model", name)
                .put("prompt", LlamaCpp.array(prompt))
                .put("max_tokens", TOKENS)
                .put("temperature", 0)
                .put("stream", stream);
    }

    @Test
    void listsTheModelByFileNameAndFingerprint() throws Exception {
        HttpTestClient http = cluster.http(router);
        HttpResponse<String> models = http.send(http.request("/v1/models").GET().build());
        JsonObject model = new JsonObject(models.body()).getJsonArray("data").getJsonObject(0);
        assertEquals("gguf-cluster", model.getString("id"));
        assertEquals(String.format("%016x", fingerprint), model.getString("fingerprint"));
    }

    @Test
    void streamsLlamaCppsContinuationAndReusesThePrefix() throws Exception {
        Completion.Answer streamed = Completion.Answer.of(
                cluster.http(router)
                        .postAsync("/v1/completions", request(true).encode())
                        .get(60, TimeUnit.SECONDS),
                true,
                "streamed");
        assertArrayEquals(expected, streamed.tokenIds(), "llama.cpp's greedy continuation");
        assertEquals(expectedText, streamed.text());
        HttpResponse<String> again = cluster.http(router)
                .postAsync("/v1/completions", request(false).encode())
                .get(60, TimeUnit.SECONDS);
        assertEquals(200, again.statusCode(), again.body());
        JsonObject body = new JsonObject(again.body());
        int cached = body.getJsonObject("usage")
                .getJsonObject("prompt_tokens_details")
                .getInteger("cached_tokens");
        System.out.printf("GGUF cluster: %d-token prompt repeated, %d tokens cached%n", prompt.length, cached);
        assertTrue(cached >= 16, "cached_tokens on a repeated prompt: " + cached);
        JsonArray ids = body.getJsonArray("choices").getJsonObject(0).getJsonArray("token_ids");
        assertArrayEquals(expected, LlamaCpp.ints(ids), "the repeat, from cached KV");
    }

    @Test
    void aDecodeWorkerKilledMidStreamChangesNoToken() throws Exception {
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            calls.add(cluster.http(router)
                    .postAsync("/v1/completions", request(true).encode()));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            JsonObject w = worker(router, "decode-1");
            JsonObject p = worker(router, "prefill-1");
            // Mid-stream for every request: one still prefilling for decode-1 would avoid the only prefill
            // worker on its move (its cancel there is not scoped to the attempt) and fail, by design.
            if (w != null
                    && w.getJsonObject("load").getInteger("active_sequences") >= 1
                    && p != null
                    && p.getJsonObject("load").getInteger("prefilling", 0) == 0) {
                break;
            }
            assertTrue(
                    System.nanoTime() < deadline,
                    "decode-1 never took a stream with prefill-1 idle\n" + cluster.describe(20));
            Thread.sleep(20);
        }
        Thread.sleep(300); // some tokens out
        decode1.kill9();
        int moved = 0;
        for (int i = 0; i < calls.size(); i++) {
            Completion.Answer a = Completion.Answer.of(calls.get(i).get(90, TimeUnit.SECONDS), true, "stream " + i);
            assertArrayEquals(expected, a.tokenIds(), "tokens of stream " + i);
            assertEquals(expectedText, a.text(), "text of stream " + i);
            moved += "decode-1".equals(a.decodeWorker()) ? 1 : 0;
        }
        System.out.printf("GGUF cluster: decode-1 killed mid-stream, %d of 4 streams moved, all exact%n", moved);
        assertTrue(moved >= 1, "streams on the killed worker: " + moved);
    }
}
