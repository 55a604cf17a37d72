package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The web console's files are served from the jar at /, /console/* and /vendor/*, with their content
 * types and a strict CSP, and mounting them changes nothing for the API: its 404 and 405 answers stay.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WebConsoleRoutesTest {
    private TandemNode node;
    private HttpTestClient http;

    @BeforeAll
    void start() {
        node = TandemNode.start(TestNodes.config(), new TandemNode.Plan(true, List.of(), List.of()));
        http = new HttpTestClient(node.router().httpPort());
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private HttpResponse<String> get(String path) {
        return http.send(http.request(path).GET().build());
    }

    @Test
    void theConsolePageIsServedAtTheRoot() {
        for (String path : List.of("/")) {
            HttpResponse<String> r = get(path);
            assertEquals(200, r.statusCode(), path);
            assertTrue(
                    r.headers().firstValue("Content-Type").orElse("").startsWith("text/html"),
                    r.headers().toString());
            for (String id : List.of("prompt", "max-tokens", "generate", "output", "workers", "bridge-status")) {
                assertTrue(r.body().contains("id=\"" + id + "\""), path + " has #" + id);
            }
            assertTrue(
                    r.headers().firstValue("Content-Security-Policy").orElse("").contains("default-src 'self'"));
            assertEquals("no-cache", r.headers().firstValue("Cache-Control").orElse(""), "a new jar shows at once");
            assertTrue(!r.body().contains("//cdn") && !r.body().contains("https://"), "nothing from a CDN");
        }
    }

    @Test
    void scriptsStylesAndVendoredLibrariesAreServed() {
        for (var e : List.of(
                List.of("/console/console.js", "javascript"),
                List.of("/console/console.css", "text/css"),
                List.of("/vendor/sockjs.min.js", "javascript"),
                List.of("/vendor/vertx-eventbus.js", "javascript"))) {
            HttpResponse<String> r = get(e.get(0));
            assertEquals(200, r.statusCode(), e.get(0));
            assertTrue(r.headers().firstValue("Content-Type").orElse("").contains(e.get(1)), e + ": " + r.headers());
            assertTrue(r.body().length() > 1000, e.get(0));
        }
        assertTrue(
                get("/vendor/sockjs.min.js").body().startsWith("/* sockjs-client v1.6.1"), "with its licence header");
        assertTrue(get("/vendor/vertx-eventbus.js").body().contains("Apache License v2.0"), "with its licence header");
        assertEquals(
                200,
                http.send(http.request("/")
                                .method("HEAD", HttpRequest.BodyPublishers.noBody())
                                .build())
                        .statusCode());
    }

    @Test
    void theApiAnswersAsBefore() {
        HttpResponse<String> models = get("/v1/models");
        assertEquals(200, models.statusCode(), models.body());
        assertEquals("list", new JsonObject(models.body()).getString("object"));
        assertEquals(405, get("/v1/completions").statusCode(), "a wrong method on a known route");
        HttpResponse<String> missing = get("/console/nothing.js");
        assertEquals(404, missing.statusCode());
        assertEquals(
                "not_found",
                new JsonObject(missing.body()).getJsonObject("error").getString("code"));
        assertEquals(404, get("/nope").statusCode());
        assertEquals(404, get("/webroot/index.html").statusCode(), "only the console's own paths");
        HttpResponse<String> post = http.post("/", "{}");
        assertTrue(
                post.statusCode() == 405 || post.statusCode() == 404, "POST / is not the page: " + post.statusCode());
        assertEquals(200, get("/health").statusCode());
    }
}
