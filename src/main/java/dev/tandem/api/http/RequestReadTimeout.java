package dev.tandem.api.http;

import dev.tandem.api.ErrorBodies;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/**
 * {@code http.request-read-timeout-ms}: a client that trickles a request (one byte a second is never idle)
 * must not hold a connection and a body buffer for ever. A connection whose first request has not arrived
 * within the limit is closed; a request whose body has not fully arrived within it gets 408 and the close.
 * WebSocket upgrades are left to the socket's own per-message bound.
 */
public final class RequestReadTimeout {
    private static final Logger LOG = Logger.getLogger(RequestReadTimeout.class.getName());

    private final Vertx vertx;
    private final long timeoutMs;
    /** Connections that have begun a request; touched on the server's event loop and by closes. */
    private final Set<HttpConnection> started = ConcurrentHashMap.newKeySet();

    public RequestReadTimeout(Vertx vertx, long timeoutMs) {
        this.vertx = vertx;
        this.timeoutMs = timeoutMs;
    }

    /** For {@code HttpServer.connectionHandler}: closes a connection that sends no request head in time. */
    public void onConnection(HttpConnection connection) {
        if (timeoutMs <= 0) {
            return;
        }
        long timer = vertx.setTimer(timeoutMs, id -> {
            if (!started.contains(connection)) {
                LOG.warning("HTTP connection from " + connection.remoteAddress() + " sent no request within "
                        + timeoutMs + " ms (http.request-read-timeout-ms); closed");
                connection.close();
            }
        });
        connection.closeHandler(v -> {
            vertx.cancelTimer(timer);
            started.remove(connection);
        });
    }

    /** Wraps the request handler: bounds the time until the request's last byte. */
    public Handler<HttpServerRequest> wrap(Handler<HttpServerRequest> next) {
        return request -> {
            if (timeoutMs > 0) {
                started.add(request.connection());
                if (!request.isEnded() && !request.canUpgradeToWebSocket()) {
                    arm(request);
                }
            }
            next.handle(request);
        };
    }

    private void arm(HttpServerRequest request) {
        long timer = vertx.setTimer(timeoutMs, id -> {
            HttpServerResponse response = request.response();
            // A closed connection is forgotten: Vert.x does not tell a request answered early that it closed.
            if (request.isEnded() || response.closed() || !started.contains(request.connection())) {
                return;
            }
            if (response.headWritten()) {
                // Answered before its body arrived (a 413, a 401): a second answer would be a protocol error.
                LOG.warning("HTTP request from " + request.remoteAddress() + " was answered but its body did not"
                        + " arrive within " + timeoutMs + " ms (http.request-read-timeout-ms); closed");
                request.connection().close();
                return;
            }
            LOG.warning("HTTP request from " + request.remoteAddress() + " not read within " + timeoutMs
                    + " ms (http.request-read-timeout-ms); answered 408 and closed");
            response.putHeader("Connection", "close");
            ErrorResponses.send(
                    response,
                    408,
                    ErrorBodies.body(
                            "the request did not arrive within " + timeoutMs + " ms",
                            "invalid_request_error",
                            null,
                            "request_timeout"));
            request.connection().close();
        });
        request.end().onComplete(ar -> vertx.cancelTimer(timer));
    }
}
