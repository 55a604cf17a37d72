package dev.tandem.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code cache-aware} policy end to end ({@code router.policy: cache-aware} on an embedded node of 2
 * prefill and 2 decode workers): a repeated prompt goes back to the pair this router sent it to, from
 * the router's own routed-prefix trees; the decode worker never prefills it itself, though it holds it;
 * the prefill worker still reuses its prefix cache.
 */
class CacheAwarePolicyServingTest {
    private TandemNode node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private static String body(String prompt) {
        return new JsonObject()
                .put("prompt", prompt)
                .put("max_tokens", 2)
                .put("temperature", 0)
                .encode();
    }

    private record Served(String prefill, String decode, int cachedTokens) {}

    private static Served post(HttpTestClient http, String prompt) {
        HttpResponse<String> r = http.post("/v1/completions", body(prompt));
        assertEquals(200, r.statusCode(), r.body());
        return new Served(
                r.headers().firstValue("X-Tandem-Prefill-Worker").orElseThrow(),
                r.headers().firstValue("X-Tandem-Decode-Worker").orElseThrow(),
                new JsonObject(r.body())
                        .getJsonObject("usage")
                        .getJsonObject("prompt_tokens_details")
                        .getInteger("cached_tokens"));
    }

    @Test
    void aRepeatedPromptGoesBackToItsPairWithoutLocalPrefill() {
        TandemConfig base = TestNodes.config();
        node = TandemNode.start(
                TestSettings.withRouter(base, TestSettings.withPolicy(base.router(), "cache-aware")),
                TandemNode.Plan.embedded(2, 2));
        RouterVerticle router = node.router();
        TestNodes.awaitWorkers(router, 2, 2);
        HttpTestClient http = new HttpTestClient(router.httpPort());
        String story = "Once upon a time, in a land of routers and workers, a prompt was sent twice. ".repeat(3);

        Served first = post(http, story);
        Served again = post(http, story);
        assertEquals(first.prefill(), again.prefill(), "the prefill worker the prompt was routed to");
        assertEquals(first.decode(), again.decode(), "the decode worker the prompt was routed to");
        assertNotEquals(again.decode(), again.prefill(), "no local prefill under cache-aware");
        assertTrue(again.cachedTokens() > 0, "the prefill worker reused its prefix cache: " + again);

        // Another prompt matches nothing this router routed: the workers with the smallest trees.
        Served other = post(http, "A different story altogether, about a cache that nobody knew of. ".repeat(3));
        assertNotEquals(first.prefill(), other.prefill());
        assertNotEquals(first.decode(), other.decode());
    }
}
