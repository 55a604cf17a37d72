package dev.tandem.api.http;

import dev.tandem.api.ErrorBodies;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.TooLongFrameException;
import io.vertx.core.http.HttpClosedException;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.StreamResetException;
import io.vertx.ext.web.RoutingContext;
import java.net.SocketException;
import java.nio.channels.ClosedChannelException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Requests that are not HTTP as Netty reads it — a bad chunk size, {@code Content-Length: -1} or of twenty
 * digits, a NUL in a header, a request line or headers over the limits — answered in the OpenAI error
 * shape like every other error, then the connection closed (the stream cannot be trusted after them).
 * They are the client's fault: logged as a WARN with the peer, not as a SEVERE with a stack. So is a client
 * that goes away in the middle of its request.
 */
public final class HttpProtocolErrors {
    private static final Logger LOG = Logger.getLogger(HttpProtocolErrors.class.getName());
    private static final String GONE_LOGGED = "tandem.client-gone-logged";

    private HttpProtocolErrors() {}

    /** The server's invalid request handler: the request line or headers could not be decoded. */
    public static void invalidRequest(HttpServerRequest request) {
        DecoderResult result = request.decoderResult();
        Throwable cause = result == null ? null : result.cause();
        int status = 400;
        String code = "bad_request";
        if (cause instanceof TooLongFrameException && cause.getMessage() != null) {
            if (cause.getMessage().startsWith("An HTTP line is larger than")) {
                status = 414;
                code = "uri_too_long";
            } else if (cause.getMessage().startsWith("HTTP header is larger than")) {
                status = 431;
                code = "headers_too_large";
            }
        }
        answer(request, status, code, cause);
    }

    /**
     * Wraps the request handler: a body that breaks HTTP framing on a route that never reads it (a GET, a
     * 404) reaches the request's exception handler, not the routes' failure handler; answer it there too.
     * Routes that read the body replace this handler with their own, which fails into {@link #onFailure}.
     */
    public static io.vertx.core.Handler<HttpServerRequest> guard(io.vertx.core.Handler<HttpServerRequest> next) {
        return request -> {
            boolean[] goneLogged = {false};
            request.exceptionHandler(e -> {
                if (fromDecoder(e)) {
                    answer(request, 400, "bad_request", e);
                } else if (clientGone(e)) {
                    if (!goneLogged[0]) {
                        goneLogged[0] = true;
                        logGone(request, e);
                    }
                } else {
                    LOG.log(Level.FINE, "HTTP request from " + request.remoteAddress() + " failed", e);
                }
            });
            next.handle(request);
        };
    }

    /**
     * The routes' first failure handler: a failure raised by Netty's HTTP decoder (a body that breaks the
     * framing, e.g. a chunk size that is not hex) is the client's; anything else goes on to the router's
     * error handlers.
     */
    static void onFailure(RoutingContext ctx) {
        Throwable failure = ctx.failure();
        if (fromDecoder(failure)) {
            answer(ctx.request(), 400, "bad_request", failure);
        } else if (clientGone(failure)) {
            // A reset is followed by the close: one line for both.
            if (ctx.get(GONE_LOGGED) == null) {
                ctx.put(GONE_LOGGED, true);
                logGone(ctx.request(), failure);
            }
        } else {
            ctx.next();
        }
    }

    /**
     * The connection closed or reset while the request was being read (the body handler fails the route with
     * it): the client went away, there is no one to answer, and Vert.x would log it as a SEVERE router error.
     * Socket failures only: another IOException (a file a route could not read) still gets its 500.
     */
    private static boolean clientGone(Throwable failure) {
        return failure instanceof HttpClosedException
                || failure instanceof StreamResetException
                || failure instanceof SocketException
                || failure instanceof ClosedChannelException;
    }

    private static void logGone(HttpServerRequest request, Throwable cause) {
        LOG.warning("HTTP client " + request.remoteAddress() + " went away before its request to " + request.path()
                + " was read (" + cause + ")");
    }

    private static boolean fromDecoder(Throwable failure) {
        if (failure == null) {
            return false;
        }
        if (failure instanceof io.netty.handler.codec.DecoderException) {
            return true;
        }
        StackTraceElement[] stack = failure.getStackTrace();
        return stack.length > 0 && stack[0].getClassName().startsWith("io.netty.handler.codec.http.");
    }

    private static void answer(HttpServerRequest request, int status, String code, Throwable cause) {
        LOG.log(
                Level.WARNING,
                "HTTP protocol error from " + request.remoteAddress() + ": " + (cause == null ? "?" : cause.toString())
                        + "; answered " + status + " and closed");
        HttpServerResponse response = request.response();
        if (response.headWritten() || response.ended() || response.closed()) {
            request.connection().close();
            return;
        }
        response.putHeader("Connection", "close");
        ErrorResponses.send(
                response,
                status,
                ErrorBodies.body(
                        "the request is not valid HTTP/1.1: "
                                + (cause == null || cause.getMessage() == null ? "malformed" : cause.getMessage()),
                        "invalid_request_error",
                        null,
                        code));
        request.connection().close();
    }
}
