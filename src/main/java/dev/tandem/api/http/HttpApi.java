package dev.tandem.api.http;

import dev.tandem.api.ApiKind;
import dev.tandem.api.ErrorBodies;
import dev.tandem.api.OpenAiRequestParser;
import dev.tandem.api.Tenants;
import dev.tandem.cluster.WorkerDirectory;
import dev.tandem.config.HttpSettings;
import dev.tandem.router.RequestRouter;
import dev.tandem.router.ServedModel;
import dev.tandem.router.ServedModels;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.function.Supplier;

/** The router's HTTP surface: OpenAI-compatible endpoints, and errors in OpenAI's shape for every failure. */
public final class HttpApi {
    private HttpApi() {}

    /**
     * {@code DELETE /v1/sessions/{key}}: forgets a session's affinity (the seed's evict_kv_affinity); the
     * session's next request is scheduled as a new session's, with every model served. 204, whether or not it was known.
     */
    private static void forgetSession(RoutingContext ctx, RequestRouter requests, ServedModels models) {
        String key = ctx.pathParam("key");
        if (key == null || key.isEmpty() || key.length() > 256) {
            ErrorResponses.send(
                    ctx.response(),
                    400,
                    ErrorBodies.body(
                            "the session key must be 1 to 256 characters",
                            "invalid_request_error",
                            "key",
                            "invalid_value"));
            return;
        }
        requests.forgetSession(
                        key, models.listed().stream().map(ServedModel::name).toList())
                .onComplete(ar -> {
                    if (ar.succeeded()) {
                        ctx.response().setStatusCode(204).end();
                    } else {
                        ErrorResponses.send(
                                ctx.response(),
                                503,
                                ErrorBodies.body(
                                        "the session could not be forgotten: "
                                                + ar.cause().getMessage(),
                                        "service_unavailable",
                                        null,
                                        "cluster_unavailable"));
                    }
                });
    }

    public static Router create(
            Vertx vertx,
            HttpSettings http,
            OpenAiRequestParser parser,
            Tenants tenants,
            RequestRouter disagg,
            ServedModels served,
            WorkerDirectory directory,
            Supplier<JsonObject> routers,
            Handler<RoutingContext> metrics,
            OpsRoutes.Check... readiness) {
        Router router = Router.router(vertx);
        guard(router, http);
        OpsRoutes.mount(router, vertx, metrics, readiness);
        apiRoutes(router, http, parser, tenants, disagg, served, directory, routers);
        errorBodies(router, http);
        return router;
    }

    /** Before every route: framing errors, unread bodies, Expect, the API keys, the body limit. */
    private static void guard(Router router, HttpSettings http) {
        // First: a body that breaks HTTP framing is the client's error, answered before any route's handler.
        router.route().failureHandler(HttpProtocolErrors::onFailure);
        router.route().handler(UnreadBodyClose::handle);
        router.route().handler(ExpectHeader::handle);
        if (!http.apiKeys().isEmpty()) {
            ApiKeyHandler keys = new ApiKeyHandler(http.apiKeys());
            router.route("/v1/*").handler(keys);
            router.route("/admin/*").handler(keys);
            // http.metrics-public: false puts metrics and readiness behind the keys too; liveness stays open.
            if (!http.metricsPublic()) {
                router.route("/metrics").handler(keys);
                router.route("/ready").handler(keys);
            }
        }
        // After the keys (no body is buffered for a client without one), before every route: each body is read
        // (within max-body-bytes) also where no route wants one, so a body that breaks the framing fails into
        // the failure handler and gets its 400 instead of a dropped connection. The SockJS bridge reads its own.
        // WebSocket upgrades are left alone: reading their (empty) body first made the handshake fail.
        // A body the completions would refuse for its media type is refused before it is read.
        router.post("/v1/completions").handler(JsonRequestBody::refuseOtherMediaTypes);
        router.post("/v1/chat/completions").handler(JsonRequestBody::refuseOtherMediaTypes);
        BodyHandler bodies = BodyHandler.create(false).setBodyLimit(http.maxBodyBytes());
        router.routeWithRegex("^(?!/eventbus(/|$)).*").handler(ctx -> {
            if (ctx.request().canUpgradeToWebSocket()) {
                ctx.next();
            } else {
                bodies.handle(ctx);
            }
        });
    }

    /** The OpenAI API, the admin routes, sessions and the WebSocket stream. */
    private static void apiRoutes(
            Router router,
            HttpSettings http,
            OpenAiRequestParser parser,
            Tenants tenants,
            RequestRouter disagg,
            ServedModels served,
            WorkerDirectory directory,
            Supplier<JsonObject> routers) {
        router.post("/v1/completions").handler(new CompletionsHandler(parser, disagg, ApiKind.COMPLETION, tenants));
        router.post("/v1/chat/completions").handler(new CompletionsHandler(parser, disagg, ApiKind.CHAT, tenants));
        ModelsHandler models = new ModelsHandler(served);
        router.get("/v1/models").handler(models);
        router.get("/v1/models/:model").handler(models::one);
        AdminHandler admin = new AdminHandler(directory);
        router.get("/admin/workers").handler(admin::workers);
        router.get("/admin/routers").handler(ctx -> ctx.json(routers.get()));
        router.post("/admin/workers/:id/drain").handler(admin::drain);
        router.delete("/v1/sessions/:key").handler(ctx -> forgetSession(ctx, disagg, served));
        router.route("/v1/stream")
                .handler(new WebSocketStreamHandler(
                        parser, disagg, http.maxBodyBytes(), http.requestReadTimeoutMs(), tenants));
    }

    /** Vert.x Web's own error answers, as OpenAI-style JSON. */
    private static void errorBodies(Router router, HttpSettings http) {
        router.errorHandler(
                404,
                ctx -> ErrorResponses.send(
                        ctx.response(),
                        404,
                        ErrorBodies.body(
                                "no route for " + ctx.request().method() + " "
                                        + ctx.request().path(),
                                "invalid_request_error",
                                null,
                                "not_found")));
        router.errorHandler(
                405,
                ctx -> ErrorResponses.send(
                        ctx.response(),
                        405,
                        ErrorBodies.body(
                                "method " + ctx.request().method() + " is not allowed on "
                                        + ctx.request().path(),
                                "invalid_request_error",
                                null,
                                "method_not_allowed")));
        router.errorHandler(
                413,
                ctx -> ErrorResponses.send(
                        ctx.response(),
                        413,
                        ErrorBodies.body(
                                "the request body is larger than " + http.maxBodyBytes() + " bytes",
                                "invalid_request_error",
                                null,
                                "request_too_large")));
        router.errorHandler(
                400,
                ctx -> ErrorResponses.send(
                        ctx.response(),
                        400,
                        ErrorBodies.body("bad request", "invalid_request_error", null, "bad_request")));
        router.errorHandler(
                500,
                ctx -> ErrorResponses.send(
                        ctx.response(),
                        500,
                        ErrorBodies.body("internal error", "server_error", null, "internal_error")));
    }

    /**
     * HTTP/1.1 only: Vert.x serves h2c prior knowledge only together with the h2c Upgrade, and answers a
     * malformed upgrade bare and leaves it open (a prior-knowledge preface gets {@link Http2Refusal}'s 505).
     * A WebSocket message may be as large as an HTTP body; Vert.x's 64 KiB frame default would cut browsers off.
     */
    public static HttpServerOptions serverOptions(dev.tandem.config.HttpSettings http) {
        int max = (int) Math.min(
                Integer.MAX_VALUE, Math.max(HttpServerOptions.DEFAULT_MAX_WEBSOCKET_FRAME_SIZE, http.maxBodyBytes()));
        return new HttpServerOptions()
                .setCompressionSupported(false)
                .setHttp2ClearTextEnabled(false)
                .setMaxWebSocketFrameSize(max)
                .setMaxWebSocketMessageSize(max)
                // No WebSocket extension is negotiated, so Netty refuses frames with RSV bits (1002), and no
                // compressed message can inflate past the limits (a zip bomb).
                .setPerFrameWebSocketCompressionSupported(false)
                .setPerMessageWebSocketCompressionSupported(false)
                .setIdleTimeoutUnit(java.util.concurrent.TimeUnit.MILLISECONDS)
                .setIdleTimeout((int) http.idleTimeoutMs());
    }
}
