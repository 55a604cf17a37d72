package dev.tandem.api.http;

import dev.tandem.api.ErrorBodies;
import dev.tandem.api.OpenAiRequestParser;
import dev.tandem.api.Tenants;
import dev.tandem.router.RequestClass;
import dev.tandem.router.RequestRouter;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code /v1/stream}: upgrades to a WebSocket on which a client runs many completions and chat
 * requests at once, each tagged with its own {@code id}. Mounted as a route (not a server-level
 * WebSocket handler) so the upgrade passes the Router's {@code /v1/*} handlers, API keys included.
 */
public final class WebSocketStreamHandler implements Handler<RoutingContext> {
    private static final Logger LOG = Logger.getLogger(WebSocketStreamHandler.class.getName());

    private final OpenAiRequestParser parser;
    private final RequestRouter router;
    private final long maxMessageBytes;
    private final long readTimeoutMs;
    private final Tenants tenants;

    /**
     * @param maxMessageBytes the largest request message accepted ({@code http.max-body-bytes})
     * @param readTimeoutMs   the longest a message's frames may take to arrive ({@code http.request-read-timeout-ms})
     */
    public WebSocketStreamHandler(
            OpenAiRequestParser parser, RequestRouter router, long maxMessageBytes, long readTimeoutMs) {
        this(parser, router, maxMessageBytes, readTimeoutMs, null);
    }

    /** @param tenants who requests are from (the upgrade's headers, each message's {@code user}); null: the default tenant */
    public WebSocketStreamHandler(
            OpenAiRequestParser parser,
            RequestRouter router,
            long maxMessageBytes,
            long readTimeoutMs,
            Tenants tenants) {
        this.tenants = tenants;
        this.readTimeoutMs = readTimeoutMs;
        this.parser = parser;
        this.router = router;
        this.maxMessageBytes = maxMessageBytes;
    }

    @Override
    public void handle(RoutingContext ctx) {
        HttpServerRequest request = ctx.request();
        if (!request.canUpgradeToWebSocket()) {
            ctx.response().putHeader("Upgrade", "websocket");
            ErrorResponses.send(
                    ctx.response(),
                    426,
                    ErrorBodies.body(
                            request.path()
                                    + " is a WebSocket endpoint: connect with a GET carrying 'Upgrade: websocket'",
                            "invalid_request_error",
                            null,
                            "upgrade_required"));
            return;
        }
        // The session header of the upgrade applies to every request on the socket, as on HTTP.
        String sessionHeader = request.getHeader(CompletionsHandler.SESSION_HEADER);
        // The upgrade's headers (key, tenant, deadline, TTFT target) apply to every request on the socket.
        io.vertx.core.MultiMap headers =
                io.vertx.core.MultiMap.caseInsensitiveMultiMap().addAll(request.headers());
        java.util.function.Function<String, RequestClass> classify =
                user -> tenants == null ? RequestClass.DEFAULT : tenants.classify(headers::get, user);
        try {
            classify.apply(null); // a malformed header refuses the upgrade, not every message after it
        } catch (dev.tandem.api.ApiException e) {
            ErrorResponses.send(ctx.response(), e);
            return;
        }
        request.toWebSocket()
                .onSuccess(ws -> new WebSocketSession(
                                ctx.vertx(),
                                ws,
                                parser,
                                router,
                                maxMessageBytes,
                                readTimeoutMs,
                                sessionHeader,
                                classify)
                        .start())
                .onFailure(e -> LOG.log(Level.FINE, "WebSocket handshake failed", e));
    }
}
