package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.node.TandemNode;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** {@code DELETE /v1/sessions/{key}} forgets a session: its next request is scheduled as a new session's. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SessionsTest {
    private TandemNode node;
    private HttpTestClient http;

    @BeforeAll
    void start() {
        TandemConfig config = TestNodes.config();
        node = TestNodes.startEmbedded(config, 1, 2);
        http = new HttpTestClient(node.router().httpPort());
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private String complete(String session) {
        HttpResponse<String> r = http.post(
                "/v1/completions",
                new JsonObject()
                        .put("prompt", "Sessions remember their decode worker.")
                        .put("max_tokens", 4)
                        .put("temperature", 0)
                        .put("user", session)
                        .encode());
        assertEquals(200, r.statusCode(), r.body());
        return r.headers().firstValue("X-Tandem-Decode-Worker").orElseThrow();
    }

    private double affinity(String result) {
        MeterRegistry registry = node.metrics().registry();
        return registry.counter("tandem.affinity", "result", result).count();
    }

    private int delete(String path) {
        return http.send(http.request(path).DELETE().build()).statusCode();
    }

    @Test
    void aForgottenSessionIsScheduledAsANewOne() {
        String first = complete("alice");
        double hits = affinity("hit");
        double misses = affinity("miss");
        assertEquals(first, complete("alice"), "the session returns to its decode worker");
        assertEquals(hits + 1, affinity("hit"));

        assertEquals(204, delete("/v1/sessions/alice"));
        complete("alice");
        assertEquals(hits + 1, affinity("hit"), "no affinity any more");
        assertEquals(misses + 1, affinity("miss"), "scheduled as a new session");
        assertEquals(204, delete("/v1/sessions/nobody-knows-me"), "unknown sessions are forgotten too");
    }

    @Test
    void onlyDeleteForgets() {
        HttpResponse<String> r =
                http.send(http.request("/v1/sessions/alice").GET().build());
        assertEquals(405, r.statusCode(), r.body());
        assertEquals(
                "method_not_allowed",
                new JsonObject(r.body()).getJsonObject("error").getString("code"));
        HttpRequest tooLong =
                http.request("/v1/sessions/" + "k".repeat(300)).DELETE().build();
        assertEquals(400, http.send(tooLong).statusCode());
    }
}
