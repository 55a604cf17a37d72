package dev.tandem.bridge.client;

import dev.tandem.api.ErrorBodies;
import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Keeps other web sites off a router's SockJS bridge. A browser always names the page's origin on a
 * WebSocket upgrade and a cross-origin XHR, and a WebSocket is not bound by CORS: without this check,
 * any page a user opens could drive a router on their machine. The router's own pages reached on a
 * loopback address (the console) and the configured origins pass; programs that send no {@code Origin}
 * are not browsers and pass too.
 */
final class OriginCheck implements Handler<RoutingContext> {
    private static final java.util.regex.Pattern LOOPBACK_HOST =
            java.util.regex.Pattern.compile("(localhost|127(\\.\\d{1,3}){3}|\\[::1\\])(:\\d+)?");
    private final Set<String> allowed;

    OriginCheck(List<String> allowedOrigins) {
        this.allowed = allowedOrigins.stream().map(OriginCheck::normalize).collect(Collectors.toUnmodifiableSet());
    }

    @Override
    public void handle(RoutingContext ctx) {
        String origin = ctx.request().getHeader("Origin");
        if (origin == null || allowed.contains("*") || allowed.contains(normalize(origin)) || sameOrigin(ctx, origin)) {
            ctx.next();
            return;
        }
        ctx.response()
                .setStatusCode(403)
                .putHeader("Content-Type", "application/json")
                .end(ErrorBodies.body(
                                "pages from " + origin + " may not use this bridge (bridge.sockjs-allowed-origins)",
                                "invalid_request_error",
                                null,
                                "origin_not_allowed")
                        .encode());
    }

    /**
     * The page was served by this router, reached by a loopback name: its origin's host:port is the one
     * the request was sent to. Only loopback: a {@code Host} the browser took from a web site's name may
     * be a DNS-rebinding page aimed at 127.0.0.1; a router reached by a public name lists that origin.
     */
    private static boolean sameOrigin(RoutingContext ctx, String origin) {
        String host = ctx.request().getHeader("Host");
        if (host == null
                || !LOOPBACK_HOST.matcher(host.toLowerCase(Locale.ROOT)).matches()) {
            return false;
        }
        String o = normalize(origin);
        String h = host.toLowerCase(Locale.ROOT);
        return o.equals("http://" + h) || o.equals("https://" + h);
    }

    private static String normalize(String origin) {
        String o = origin.trim().toLowerCase(Locale.ROOT);
        return o.endsWith("/") ? o.substring(0, o.length() - 1) : o;
    }
}
