package dev.tandem.api.http;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.healthchecks.Status;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.healthchecks.HealthCheckHandler;
import java.util.function.Supplier;

/**
 * What an orchestrator and a scraper ask every node: {@code /health} (liveness: the process and its
 * event loop answer), {@code /ready} (readiness: 200 with every check up, 503 with the failing ones
 * named) and {@code /metrics} (Prometheus text). Mounted on the router's API and on a worker node's
 * own port.
 */
public final class OpsRoutes {

    /** One readiness check: null when ready, or why not. */
    public record Check(String name, Supplier<String> problem) {}

    private OpsRoutes() {}

    /**
     * A server with only these routes: a worker node's, when {@code worker.http-port} is set. Idle connections
     * go after {@code idleTimeoutMs} (0 = never) and malformed requests get JSON errors, as on the router.
     */
    public static Future<HttpServer> serve(
            Vertx vertx, String host, int port, long idleTimeoutMs, Handler<RoutingContext> metrics, Check... checks) {
        Router router = Router.router(vertx);
        mount(router, vertx, metrics, checks);
        return vertx.createHttpServer(new io.vertx.core.http.HttpServerOptions()
                        .setIdleTimeoutUnit(java.util.concurrent.TimeUnit.MILLISECONDS)
                        .setIdleTimeout((int) idleTimeoutMs))
                .requestHandler(router)
                .invalidRequestHandler(HttpProtocolErrors::invalidRequest)
                .listen(port, host);
    }

    public static void mount(Router router, Vertx vertx, Handler<RoutingContext> metrics, Check... checks) {
        router.get("/health").handler(ctx -> ctx.json(new JsonObject().put("status", "UP")));
        HealthChecks readiness = HealthChecks.create(vertx);
        for (Check c : checks) {
            readiness.register(c.name(), promise -> {
                String problem = c.problem().get();
                promise.complete(problem == null ? Status.OK() : Status.KO(new JsonObject().put("reason", problem)));
            });
        }
        router.get("/ready").handler(HealthCheckHandler.createWithHealthChecks(readiness));
        router.get("/metrics").handler(metrics);
    }
}
