package dev.tandem.api.http;

import dev.tandem.api.ErrorBodies;
import dev.tandem.config.HttpSettings;
import dev.tandem.security.CertificateReloader;
import dev.tandem.security.ConnectionLimiter;
import dev.tandem.security.TlsFiles;
import dev.tandem.security.TlsListeners;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.impl.ConnectionBase;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/**
 * The router's HTTP listeners: the API port (TLS from {@code http.tls-*}, its certificate reloaded when the
 * files change, HTTP/2 offered by ALPN), the optional clear-text {@code http.plain-port} beside it, and the
 * connection limits both share. A connection over a limit gets its first request answered 503
 * {@code too_many_connections} and is closed.
 */
public final class HttpListeners {
    private static final Logger LOG = Logger.getLogger(HttpListeners.class.getName());

    /** How long a connection over a limit may take to send the request that is answered with the refusal. */
    private static final long REFUSED_CLOSE_MS = 5_000;

    private final Vertx vertx;
    private final HttpSettings http;
    private final ConnectionLimiter limiter;
    /** Connections over a limit, answered at their first request; on several event loops. */
    private final Set<HttpConnection> refused = ConcurrentHashMap.newKeySet();

    private HttpServer api;
    private HttpServer plain;
    private CertificateReloader reloader;

    public HttpListeners(Vertx vertx, HttpSettings http) {
        this.vertx = vertx;
        this.http = http;
        this.limiter = new ConnectionLimiter("http", http.connections());
    }

    /**
     * Listens on {@code http.port} (and {@code http.plain-port}); {@code onConnection} and {@code requests} are
     * the API's. Completes with the API's server.
     */
    public Future<HttpServer> listen(Handler<HttpConnection> onConnection, Handler<HttpServerRequest> requests) {
        return TlsFiles.load(vertx, http.tls()).compose(files -> {
            var options = HttpApi.serverOptions(http);
            if (files != null) {
                TlsListeners.secure(options, files, true);
            }
            return vertx.createHttpServer(options)
                    .connectionHandler(counted(onConnection))
                    .requestHandler(limited(requests))
                    .invalidRequestHandler(HttpProtocolErrors::invalidRequest)
                    .listen(http.port(), http.host())
                    .compose(server -> {
                        api = server;
                        if (files != null) {
                            reloader = new CertificateReloader(
                                    vertx, "http", http.tls(), files, true, o -> server.updateSSLOptions(o, true));
                            reloader.start();
                        }
                        return http.plainPort() < 0
                                ? Future.succeededFuture(server)
                                : listenPlain(onConnection, requests);
                    });
        });
    }

    /** The clear-text listener beside TLS: the API itself during a migration, or a refusal when TLS is required. */
    private Future<HttpServer> listenPlain(Handler<HttpConnection> onConnection, Handler<HttpServerRequest> requests) {
        Handler<HttpServerRequest> handler = http.tls().required() ? this::refusePlain : requests;
        return vertx.createHttpServer(HttpApi.serverOptions(http))
                .connectionHandler(counted(onConnection))
                .requestHandler(limited(handler))
                .invalidRequestHandler(HttpProtocolErrors::invalidRequest)
                .listen(http.plainPort(), http.host())
                .map(server -> {
                    plain = server;
                    return api;
                });
    }

    /**
     * TLS is required: a browser's page load is redirected to https (308 keeps the method), anything else —
     * an API call whose key already crossed the network in clear — is refused, so the client learns to fix
     * its URL instead of silently following a redirect.
     */
    private void refusePlain(HttpServerRequest request) {
        String host =
                request.authority() == null ? http.host() : request.authority().host();
        String target =
                "https://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + api.actualPort() + request.uri();
        var response = request.response().putHeader("Connection", "close");
        if ((request.method() == HttpMethod.GET || request.method() == HttpMethod.HEAD)
                && request.getHeader("Authorization") == null) {
            response.setStatusCode(308).putHeader("Location", target).end();
            return;
        }
        ErrorResponses.send(
                response,
                403,
                ErrorBodies.body(
                        "this server requires TLS (http.tls-required): send the request to " + target,
                        "invalid_request_error",
                        null,
                        "tls_required"));
    }

    private Handler<HttpConnection> counted(Handler<HttpConnection> next) {
        return connection -> {
            String address = connection.remoteAddress() == null
                    ? "unknown"
                    : connection.remoteAddress().hostAddress();
            String refusal = limiter.admit(address);
            if (refusal != null) {
                refused.add(connection);
                LOG.fine(() -> "HTTP connection from " + address + " refused: " + refusal);
                // Told at its first request; one that sends none is not kept for the read timeout.
                vertx.setTimer(REFUSED_CLOSE_MS, t -> connection.close());
            }
            if (connection instanceof ConnectionBase base) {
                base.closeFuture().onComplete(v -> {
                    if (!refused.remove(connection)) {
                        limiter.release(address);
                    }
                });
            }
            next.handle(connection);
        };
    }

    private Handler<HttpServerRequest> limited(Handler<HttpServerRequest> next) {
        return request -> {
            if (refused.isEmpty() || !refused.contains(request.connection())) {
                next.handle(request);
                return;
            }
            var response = request.response().putHeader("Connection", "close").putHeader("Retry-After", "1");
            response.endHandler(v -> request.connection().close());
            ErrorResponses.send(
                    response,
                    503,
                    ErrorBodies.body(
                            "too many connections: this server holds "
                                    + http.connections().max()
                                    + " at once and at most "
                                    + http.connections().perAddress()
                                    + " from one address (0 = no limit); retry later",
                            "server_error",
                            null,
                            "too_many_connections"));
        };
    }

    /** The plain listener's port, or -1. */
    public int plainPort() {
        return plain == null ? -1 : plain.actualPort();
    }

    /** Open HTTP connections (both listeners). */
    public int connections() {
        return limiter.open();
    }

    public void stop() {
        if (reloader != null) {
            reloader.stop();
        }
    }
}
