package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.engine.LocalGenerator;
import dev.tandem.engine.SamplingParams;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The embedded default (router + 2 prefill + 2 decode workers in one node, the {@code default} scheduling
 * policy) over real HTTP.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public class EmbeddedServingTest {
    private TandemNode node;
    private HttpTestClient http;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        node = TestNodes.startEmbedded(config, 2, 2);
        http = new HttpTestClient(node.router().httpPort());
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private static String body(String prompt, int maxTokens, double temperature, long seed, boolean stream) {
        return new JsonObject()
                .put("prompt", prompt)
                .put("max_tokens", maxTokens)
                .put("temperature", temperature)
                .put("seed", seed)
                .put("stream", stream)
                .encode();
    }

    private LocalGenerator.Result expected(String prompt, int maxTokens, double temperature, long seed) {
        int[] tokens = node.engine().tokenizer().encode(prompt, true);
        return new LocalGenerator(node.engine())
                .generate(tokens, new SamplingParams(temperature, 1.0, 0, seed), maxTokens, new int[0]);
    }

    @Test
    void nonStreamedCompletionMatchesSingleProcessGeneration() {
        HttpResponse<String> response = http.post("/v1/completions", body("The router", 24, 0.8, 11, false));
        assertEquals(200, response.statusCode(), response.body());
        JsonObject json = new JsonObject(response.body());
        assertEquals("text_completion", json.getString("object"));
        JsonObject choice = json.getJsonArray("choices").getJsonObject(0);
        LocalGenerator.Result expected = expected("The router", 24, 0.8, 11);
        assertArrayEquals(expected.tokens(), ids(choice.getJsonArray("token_ids")));
        assertEquals(
                TestNodes.expectedText(
                        node.engine(), node.engine().tokenizer().encode("The router", true), expected.tokens()),
                choice.getString("text"));
        assertEquals(expected.finishReason(), choice.getString("finish_reason"));
        JsonObject usage = json.getJsonObject("usage");
        assertEquals(node.engine().tokenizer().encode("The router", true).length, usage.getInteger("prompt_tokens"));
        assertEquals(expected.tokens().length, usage.getInteger("completion_tokens"));
        assertEquals(
                usage.getInteger("prompt_tokens") + usage.getInteger("completion_tokens"),
                usage.getInteger("total_tokens"));
    }

    @Test
    void streamedTextEqualsNonStreamedText() {
        HttpResponse<String> plain = http.post("/v1/completions", body("Streams agree", 30, 1.0, 5, false));
        HttpResponse<String> streamed = http.post("/v1/completions", body("Streams agree", 30, 1.0, 5, true));
        assertEquals(200, streamed.statusCode());
        assertTrue(streamed.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"));
        HttpTestClient.SseResult sse = HttpTestClient.parseSse(streamed.body());
        JsonObject choice = new JsonObject(plain.body()).getJsonArray("choices").getJsonObject(0);
        assertEquals(choice.getString("text"), sse.text());
        assertArrayEquals(ids(choice.getJsonArray("token_ids")), sse.tokenIds());
        assertEquals(1, sse.doneCount());
        assertEquals(
                "data: [DONE]", "data: " + sse.payloads().get(sse.payloads().size() - 1));
    }

    @Test
    void promptAsTokenIdsIsAccepted() {
        int[] prompt = node.engine().tokenizer().encode("ids", true);
        JsonArray array = new JsonArray();
        for (int t : prompt) {
            array.add(t);
        }
        HttpResponse<String> response = http.post(
                "/v1/completions",
                new JsonObject()
                        .put("prompt", array)
                        .put("max_tokens", 8)
                        .put("temperature", 0)
                        .encode());
        assertEquals(200, response.statusCode(), response.body());
        LocalGenerator.Result expected = expected("ids", 8, 0, 0);
        assertArrayEquals(
                expected.tokens(),
                ids(new JsonObject(response.body())
                        .getJsonArray("choices")
                        .getJsonObject(0)
                        .getJsonArray("token_ids")));
    }

    @Test
    void aSessionReturnsToItsDecodeWorker() {
        for (int s = 0; s < 6; s++) {
            String session = "session-" + s;
            String first = decodeWorkerOf(http.post(
                    "/v1/completions",
                    new JsonObject()
                            .put("prompt", "turn one")
                            .put("max_tokens", 4)
                            .put("user", session)
                            .encode()));
            for (int turn = 0; turn < 2; turn++) {
                HttpResponse<String> again = http.send(http.request("/v1/completions")
                        .header("Content-Type", "application/json")
                        .header("X-Session-Id", session)
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(new JsonObject()
                                .put("prompt", "turn two")
                                .put("max_tokens", 4)
                                .encode()))
                        .build());
                assertEquals(first, decodeWorkerOf(again), "session " + session + " moved");
            }
        }
    }

    @Test
    void concurrentRequestsSpreadOverEveryWorkerAndGiveTheirLoadBack() {
        // The default policy: without a session or a cached prefix, the fewest sequences (decode) and the
        // shortest queue (prefill) decide, and ties take turns. The seed's turn-taking and least-loaded
        // prefill are SeedPolicyServingTest's. From idle heartbeats, so that no report from an earlier
        // test makes one worker look busy for the whole burst.
        TestNodes.awaitTrue(
                () -> node.router().directory().workers(WorkerRole.PREFILL).stream()
                                .allMatch(w -> w.load().queuedPrefillTokens() == 0)
                        && node.router().directory().workers(WorkerRole.DECODE).stream()
                                .allMatch(w -> w.load().activeSequences() == 0),
                java.time.Duration.ofSeconds(5),
                "the heartbeats to report every worker idle");
        List<CompletableFuture<HttpResponse<String>>> inFlight = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            inFlight.add(http.postAsync("/v1/completions", body("spread " + i, 8, 0, 0, false)));
        }
        Set<String> prefill = new HashSet<>();
        Set<String> decode = new HashSet<>();
        for (CompletableFuture<HttpResponse<String>> f : inFlight) {
            HttpResponse<String> r = f.join();
            prefill.add(r.headers().firstValue("X-Tandem-Prefill-Worker").orElseThrow());
            decode.add(decodeWorkerOf(r));
        }
        assertEquals(Set.of("prefill-1", "prefill-2"), prefill);
        assertEquals(Set.of("decode-1", "decode-2"), decode);
        TestNodes.awaitTrue(
                () -> node.router().requests().loads().total() == 0,
                java.time.Duration.ofSeconds(5),
                "load accounting to return to zero");
    }

    @Test
    void aPostAskingForAnH2cUpgradeIsAnsweredOverHttp11() throws Exception {
        // What the JDK HttpClient and curl --http2 send; the server once answered 101 and then nothing.
        byte[] body = "{\"prompt\": \"upgrade?\", \"max_tokens\": 2}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        try (java.net.Socket socket =
                new java.net.Socket("127.0.0.1", node.router().httpPort())) {
            socket.setSoTimeout(5000);
            socket.getOutputStream()
                    .write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    + "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n"
                                    + "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                            .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            socket.getOutputStream().write(body);
            String status = new java.io.BufferedReader(new java.io.InputStreamReader(
                            socket.getInputStream(), java.nio.charset.StandardCharsets.US_ASCII))
                    .readLine();
            assertEquals("HTTP/1.1 200 OK", status);
        }
    }

    private static String decodeWorkerOf(HttpResponse<String> response) {
        assertEquals(200, response.statusCode(), response.body());
        return response.headers().firstValue("X-Tandem-Decode-Worker").orElseThrow();
    }

    static int[] ids(JsonArray array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.getInteger(i);
        }
        return out;
    }

    public static WorkerLoad status(TandemNode node, String workerId) {
        return WorkerDescriptor.CODEC
                .decode(node.vertx()
                        .eventBus()
                        .<JsonObject>request(Addresses.workerStatus(workerId), null)
                        .await()
                        .body())
                .load();
    }
}
