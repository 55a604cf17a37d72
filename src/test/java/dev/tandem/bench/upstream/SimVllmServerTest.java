package dev.tandem.bench.upstream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.config.KvEventsSettings;
import dev.tandem.engine.sim.SimEngine;
import dev.tandem.engine.sim.SimProfile;
import dev.tandem.engine.sim.SimProfiles;
import dev.tandem.upstream.UpstreamLoad;
import dev.tandem.upstream.kvevents.EngineKvBatch;
import dev.tandem.upstream.kvevents.EngineKvEvent;
import dev.tandem.upstream.kvevents.ZmqKvEventSubscriber;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The sim vLLM instance the routing benchmark puts behind upstream workers, spoken to as vLLM's proxy
 * and a KV event subscriber would: the P/D flow, its cache's hits and events, its stream, its load.
 */
class SimVllmServerTest {
    private static final int BLOCK = 16;
    /** Room for 8 blocks of the profile's KV. */
    private static final SimProfile PROFILE = SimProfiles.named(SimProfiles.DEFAULT);

    private final HttpClient http = HttpClient.newHttpClient();
    private final List<EngineKvEvent> events = new CopyOnWriteArrayList<>();
    private Vertx vertx;
    private SimVllmServer prefill;
    private SimVllmServer decode;
    private ZmqKvEventSubscriber subscriber;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        long eightBlocks = 8L * BLOCK * PROFILE.kvBytesPerToken();
        prefill = SimVllmServer.prefill(vertx, "p1", "sim-vllm/test", PROFILE, 1000, BLOCK, eightBlocks);
        decode = SimVllmServer.decode(vertx, "d1", "sim-vllm/test", PROFILE, 1000, 4);
        subscriber = new ZmqKvEventSubscriber(
                        new KvEventsSettings(prefill.kvEventsEndpoint(), prefill.kvEventsReplayEndpoint(), ""),
                        "test",
                        new ZmqKvEventSubscriber.Listener() {
                            @Override
                            public void onBatch(EngineKvBatch batch) {
                                events.addAll(batch.events());
                            }

                            @Override
                            public void onReset(String why) {}
                        })
                .start();
    }

    @AfterEach
    void stop() {
        subscriber.close();
        prefill.close();
        decode.close();
        vertx.close().await();
    }

    @Test
    void prefillsForARemoteDecodeAndCountsWhatItsCacheHeld() throws Exception {
        int[] prompt = prompt(100, 1);
        JsonObject first = post(prefill, prefillBody(prompt));
        JsonObject params = first.getJsonObject("kv_transfer_params");
        assertEquals(true, params.getBoolean("do_remote_prefill"));
        assertEquals("p1", params.getString("remote_engine_id"));
        assertEquals(7, params.getJsonArray("remote_block_ids").size(), "ceil(100 / 16) blocks");
        assertEquals(0, cached(first));
        assertEquals(96, cached(post(prefill, prefillBody(prompt))), "its 6 full blocks, second time");
        int[] longer = java.util.Arrays.copyOf(prompt, 120);
        System.arraycopy(prompt(20, 2), 0, longer, 100, 20);
        assertEquals(96, cached(post(prefill, prefillBody(longer))), "a prompt extending it reuses them");
    }

    @Test
    void itsCacheEventsNameEveryStoredBlockAndEachEviction() throws Exception {
        post(prefill, prefillBody(prompt(100, 1))); // 6 blocks
        TestNodes.awaitTrue(() -> stored() == 6, "6 blocks stored");
        EngineKvEvent.Stored s = (EngineKvEvent.Stored) events.get(0);
        assertFalse(s.hasParent(), "a prompt's first block has no parent");
        assertEquals(BLOCK, s.blockSize());
        assertEquals(96, s.tokens().length);
        post(prefill, prefillBody(prompt(64, 3))); // 4 more: 2 of the first evicted (room for 8)
        TestNodes.awaitTrue(() -> stored() == 10, "10 blocks stored");
        long removed = events.stream()
                .filter(e -> e instanceof EngineKvEvent.Removed)
                .mapToLong(e -> ((EngineKvEvent.Removed) e).hashes().length)
                .sum();
        assertEquals(2, removed);
    }

    @Test
    void theDecodeInstancePullsTheKvOnceAndStreamsTheSimEnginesTokens() throws Exception {
        int[] prompt = prompt(50, 4);
        JsonObject params = post(prefill, prefillBody(prompt)).getJsonObject("kv_transfer_params");
        JsonObject body = new JsonObject()
                .put("model", "sim-vllm/test")
                .put("prompt", SimVllmProtocol.ids(prompt))
                .put("max_tokens", 5)
                .put("stream", true)
                .put("kv_transfer_params", params);
        HttpResponse<String> r = send(decode, body);
        assertEquals(200, r.statusCode(), r.body());
        List<Integer> tokens = new ArrayList<>();
        JsonObject usage = null;
        for (String line : r.body().split("\n")) {
            if (!line.startsWith("data: {")) {
                continue;
            }
            JsonObject event = new JsonObject(line.substring(6));
            JsonArray choices = event.getJsonArray("choices");
            if (choices.isEmpty()) {
                usage = event.getJsonObject("usage");
            } else {
                choices.getJsonObject(0).getJsonArray("token_ids").forEach(t -> tokens.add((Integer) t));
            }
        }
        int[] expected = new int[5];
        int previous = prompt[prompt.length - 1];
        for (int i = 0; i < 5; i++) {
            expected[i] = SimEngine.nextToken(previous, prompt.length + i);
            previous = expected[i];
        }
        assertArrayEquals(expected, tokens.stream().mapToInt(Integer::intValue).toArray());
        assertEquals(5, usage.getInteger("completion_tokens"));
        assertTrue(r.body().endsWith("data: [DONE]\n\n"));
        assertEquals(500, send(decode, body).statusCode(), "the KV was pulled already");
    }

    @Test
    void itsMetricsReadAsVllmsAndBadRequestsGetVllmErrors() throws Exception {
        HttpResponse<String> metrics = http.send(
                HttpRequest.newBuilder(URI.create(prefill.url() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(UpstreamLoad.IDLE, UpstreamLoad.parse(metrics.body()));
        HttpResponse<String> bad = send(prefill, new JsonObject().put("prompt", "text, not ids"));
        assertEquals(400, bad.statusCode());
        assertEquals("BadRequestError", new JsonObject(bad.body()).getString("type"));
        assertEquals(400, send(decode, prefillBody(prompt(10, 5))).statusCode(), "a decode instance needs KV");
    }

    private long stored() {
        return events.stream()
                .filter(e -> e instanceof EngineKvEvent.Stored)
                .mapToLong(e -> ((EngineKvEvent.Stored) e).hashes().length)
                .sum();
    }

    private static int cached(JsonObject answer) {
        return answer.getJsonObject("usage")
                .getJsonObject("prompt_tokens_details")
                .getInteger("cached_tokens");
    }

    private static JsonObject prefillBody(int[] prompt) {
        return new JsonObject()
                .put("model", "sim-vllm/test")
                .put("prompt", SimVllmProtocol.ids(prompt))
                .put("max_tokens", 1)
                .put("stream", false)
                .put("kv_transfer_params", new JsonObject().put("do_remote_decode", true));
    }

    private JsonObject post(SimVllmServer server, JsonObject body) throws Exception {
        HttpResponse<String> r = send(server, body);
        assertEquals(200, r.statusCode(), r.body());
        return new JsonObject(r.body());
    }

    private HttpResponse<String> send(SimVllmServer server, JsonObject body) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(server.url() + "/v1/completions"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body.encode()))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static int[] prompt(int length, long seed) {
        java.util.Random random = new java.util.Random(seed);
        int[] ids = new int[length];
        for (int i = 0; i < length; i++) {
            ids[i] = 32 + random.nextInt(95);
        }
        return ids;
    }
}
