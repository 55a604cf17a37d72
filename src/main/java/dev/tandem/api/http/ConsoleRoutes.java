package dev.tandem.api.http;

import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.StaticHandler;

/**
 * The web console: plain HTML, JS and CSS from the jar's {@code webroot/} (no build step), at
 * {@code /}, {@code /console/*} and {@code /vendor/*} (the SockJS and Vert.x event-bus clients, copied
 * from their npm packages). Open whatever {@code http.api-keys} says: the page holds no data; what it
 * fetches from {@code /v1} and the bridge needs a key like any other client. Only these paths are
 * mounted, so every other route keeps its own 404 and 405 answers.
 */
public final class ConsoleRoutes {
    static final String WEBROOT = "webroot";
    /** Scripts and styles from this origin only; fetches and the SockJS socket to this origin only. */
    private static final String CSP = "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
            + "object-src 'none'; base-uri 'none'; frame-ancestors 'self'";

    private ConsoleRoutes() {}

    public static void mount(Router router) {
        // A wildcard route hands StaticHandler the path below its prefix, hence one handler per folder.
        serve(router, "/", WEBROOT);
        serve(router, "/console/*", WEBROOT + "/console");
        serve(router, "/vendor/*", WEBROOT + "/vendor");
    }

    private static void serve(Router router, String path, String root) {
        // Not cached for a day as Vert.x would: a new jar's console must show at the next reload.
        StaticHandler files = StaticHandler.create(root)
                .setIndexPage("index.html")
                .setDirectoryListing(false)
                .setCachingEnabled(false);
        router.route(path)
                .method(HttpMethod.GET)
                .method(HttpMethod.HEAD)
                .handler(ctx -> {
                    ctx.response()
                            .putHeader("Cache-Control", "no-cache")
                            .putHeader("X-Content-Type-Options", "nosniff")
                            .putHeader("Content-Security-Policy", CSP);
                    ctx.next();
                })
                .handler(files);
    }
}
