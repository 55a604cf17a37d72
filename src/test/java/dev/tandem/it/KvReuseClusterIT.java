package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.it.TandemCluster.Node;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * KV reuse across router replicas, in six JVMs: a prompt served through router A is prefilled from a
 * worker's cache when it comes again through router B — B learned where its blocks are from the
 * workers' cache events, not from A. Local prefill is off here, so the hit is a prefill worker's
 * prefix cache and the KV reaches the decode worker as an incremental transfer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KvReuseClusterIT extends ClusterIT {
    private static final int BLOCK = 16;
    private static final Pattern ENTRIES = Pattern.compile("(?m)^tandem_prefix_index_entries (\\S+)$");

    private TandemProcess routerA;
    private TandemProcess routerB;

    @BeforeAll
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void start() {
        cluster = new TandemCluster(
                KvReuseClusterIT.class,
                Map.of("router.request-timeout-ms", 20_000, "router.local-prefill-max-tokens", 0));
        List<TandemProcess> nodes = cluster.start(
                Node.prefill("prefill-1"),
                Node.prefill("prefill-2"),
                Node.decode("decode-1"),
                Node.decode("decode-2"),
                Node.router("router-a"),
                Node.router("router-b"));
        routerA = nodes.get(4);
        routerB = nodes.get(5);
        cluster.awaitWorkers(routerA, 2, 2);
        cluster.awaitWorkers(routerB, 2, 2);
    }

    private static JsonObject complete(HttpTestClient http, String prompt) {
        HttpResponse<String> r = http.post(
                "/v1/completions",
                new JsonObject()
                        .put("prompt", prompt)
                        .put("max_tokens", 12)
                        .put("temperature", 0)
                        .encode());
        assertEquals(200, r.statusCode(), r.body());
        return new JsonObject(r.body());
    }

    private double indexEntries(TandemProcess router) {
        String scrape = cluster.http(router)
                .send(cluster.http(router).request("/metrics").GET().build())
                .body();
        Matcher m = ENTRIES.matcher(scrape);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    @Test
    void aPromptServedThroughOneReplicaIsCachedForTheOther() {
        String prompt = "Cluster-wide KV reuse: a system prompt shared by many requests is computed once, on "
                + "one prefill worker, and every router replica learns where its blocks are from that worker's "
                + "cache events, so the next request goes there.";
        JsonObject viaA = complete(cluster.http(routerA), prompt);
        int promptTokens = viaA.getJsonObject("usage").getInteger("prompt_tokens");
        assertTrue(promptTokens >= 8 * BLOCK, promptTokens + " prompt tokens");
        dev.tandem.TestNodes.awaitTrue(
                () -> indexEntries(routerB) >= promptTokens / BLOCK,
                Duration.ofSeconds(15),
                "router B to index the prompt's blocks");
        JsonObject viaB = complete(cluster.http(routerB), prompt);

        int cached = viaB.getJsonObject("usage")
                .getJsonObject("prompt_tokens_details")
                .getInteger("cached_tokens");
        assertTrue(cached >= promptTokens - BLOCK, "cached " + cached + " of " + promptTokens + " via router B");
        JsonObject a = viaA.getJsonArray("choices").getJsonObject(0);
        JsonObject b = viaB.getJsonArray("choices").getJsonObject(0);
        assertEquals(a.getString("text"), b.getString("text"));
        assertArrayEquals(ids(a.getJsonArray("token_ids")), ids(b.getJsonArray("token_ids")));
        int[] expected = new Completion(prompt, dev.tandem.engine.SamplingParams.GREEDY, 12).expectedTokens();
        assertArrayEquals(expected, ids(b.getJsonArray("token_ids")), "as an uncached single-process run");
    }

    private static int[] ids(JsonArray array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.getInteger(i);
        }
        return out;
    }
}
