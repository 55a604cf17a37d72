package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.WorkerLoad;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A few thousand random and mutated bodies against both endpoints: never a 5xx, every answer either a
 * completion or an OpenAI error, no request left behind, and the server serves normally afterwards.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RequestFuzzTest {
    private static final int BODIES = 3000;
    private static final int CONCURRENCY = 16;
    private static final long SEED = 20261202L;

    private TandemNode node;
    private HttpTestClient http;

    @BeforeAll
    void start() {
        node = TestNodes.startEmbedded(TestNodes.config(), 2, 2);
        http = new HttpTestClient(node.router().httpPort());
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private static final Object[] ODD_VALUES = {
        null,
        true,
        false,
        0,
        -1,
        1,
        2,
        511,
        512,
        1e30,
        -1e30,
        0.5,
        Double.MIN_VALUE,
        Long.MAX_VALUE,
        Long.MIN_VALUE,
        "",
        "x",
        "ü→漢",
        "\u0000",
        "9",
        "[]",
        new JsonArray(),
        new JsonArray().add(1).add(2),
        new JsonArray().add("a"),
        new JsonArray().add(new JsonArray()),
        new JsonObject(),
        new JsonObject().put("role", "user"),
        new JsonArray().add(new JsonObject().put("role", "user").put("content", 5)),
        new JsonArray().add(new JsonObject().put("role", "tool").put("content", "x")),
        "x".repeat(700)
    };
    private static final String[] FIELDS = {
        "prompt",
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "top_k",
        "seed",
        "stream",
        "stream_options",
        "stop",
        "user",
        "model",
        "n",
        "logprobs",
        "tools",
        "echo",
        "best_of",
        "response_format"
    };

    private static JsonObject valid(Random rnd, boolean chat) {
        JsonObject body = new JsonObject().put("max_tokens", 1 + rnd.nextInt(6)).put("seed", rnd.nextInt(100));
        if (chat) {
            body.put(
                    "messages",
                    new JsonArray().add(new JsonObject().put("role", "user").put("content", "fuzz " + rnd.nextInt())));
        } else {
            body.put("prompt", "fuzz " + rnd.nextInt());
        }
        if (rnd.nextBoolean()) {
            body.put("stream", true);
        }
        return body;
    }

    private static String mutate(Random rnd, JsonObject body) {
        int kind = rnd.nextInt(6);
        switch (kind) {
            case 0 -> body.put(FIELDS[rnd.nextInt(FIELDS.length)], ODD_VALUES[rnd.nextInt(ODD_VALUES.length)]);
            case 1 -> {
                for (int i = 0; i < 3; i++) {
                    body.put(FIELDS[rnd.nextInt(FIELDS.length)], ODD_VALUES[rnd.nextInt(ODD_VALUES.length)]);
                }
            }
            case 2 -> body.remove(FIELDS[rnd.nextInt(FIELDS.length)]);
            case 3 -> {
                String text = body.encode();
                return text.substring(0, rnd.nextInt(text.length()));
            }
            case 4 -> {
                byte[] bytes = body.encode().getBytes(StandardCharsets.UTF_8);
                for (int i = 0; i < 1 + rnd.nextInt(4); i++) {
                    bytes[rnd.nextInt(bytes.length)] = (byte) rnd.nextInt(256);
                }
                return new String(bytes, StandardCharsets.ISO_8859_1);
            }
            default -> {
                byte[] junk = new byte[rnd.nextInt(64)];
                rnd.nextBytes(junk);
                return new String(junk, StandardCharsets.ISO_8859_1);
            }
        }
        return body.encode();
    }

    @Test
    void randomAndMutatedBodiesNeverBreakTheServer() {
        Random rnd = new Random(SEED);
        Map<Integer, Integer> statuses = new TreeMap<>();
        for (int done = 0; done < BODIES; done += CONCURRENCY) {
            List<CompletableFuture<HttpResponse<String>>> batch = new ArrayList<>();
            List<String> sent = new ArrayList<>();
            for (int i = 0; i < CONCURRENCY; i++) {
                boolean chat = rnd.nextBoolean();
                String body = mutate(rnd, valid(rnd, chat));
                sent.add(body);
                batch.add(http.postAsync(chat ? "/v1/chat/completions" : "/v1/completions", body));
            }
            for (int i = 0; i < batch.size(); i++) {
                HttpResponse<String> r;
                try {
                    r = batch.get(i).join();
                } catch (java.util.concurrent.CompletionException e) {
                    throw new AssertionError("no answer to body " + sent.get(i) + "; " + state(), e);
                }
                statuses.merge(r.statusCode(), 1, Integer::sum);
                assertTrue(r.statusCode() < 500, "5xx for body " + sent.get(i) + ": " + r.body());
                if (r.statusCode() >= 400) {
                    assertTrue(new JsonObject(r.body()).getJsonObject("error").getString("message") != null, r.body());
                } else {
                    assertTrue(r.body().startsWith("{") || r.body().endsWith("data: [DONE]\n\n"), r.body());
                }
            }
        }
        System.out.println("fuzz statuses: " + statuses);
        assertTrue(
                statuses.getOrDefault(200, 0) > 0 && statuses.getOrDefault(400, 0) > 0, "both kinds seen: " + statuses);
        try {
            TestNodes.awaitTrue(
                    () -> node.router().requests().activeRequests() == 0
                            && node.router().requests().loads().total() == 0
                            && idle("prefill-1")
                            && idle("prefill-2")
                            && idle("decode-1")
                            && idle("decode-2"),
                    Duration.ofSeconds(5),
                    "no request left behind");
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + ": " + state());
        }
        HttpResponse<String> ok = http.post("/v1/completions", "{\"prompt\": \"after the storm\", \"max_tokens\": 8}");
        assertEquals(200, ok.statusCode(), ok.body());
    }

    private String state() {
        return "router active " + node.router().requests().activeRequests() + ", load "
                + node.router().requests().loads().total()
                + ", workers "
                + List.of("prefill-1", "prefill-2", "decode-1", "decode-2").stream()
                        .map(w -> EmbeddedServingTest.status(node, w).toString())
                        .toList();
    }

    private boolean idle(String worker) {
        WorkerLoad s = EmbeddedServingTest.status(node, worker);
        return s.prefilling() + s.activeSequences() + s.parkedKv() + s.incomingKv() == 0 && s.kvBytesUsed() == 0;
    }
}
