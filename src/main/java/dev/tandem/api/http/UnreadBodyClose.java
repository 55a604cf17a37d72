package dev.tandem.api.http;

import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.RoutingContext;

/**
 * The first route: an HTTP/1.x answer that begins before its request's body has been read (413, 415, 401,
 * 417) says {@code Connection: close} and closes the connection once written. The rest of that body is then
 * never read as the next request, and a client that goes on sending it holds nothing. (Not on HTTP/2, should
 * it ever be served: it frames each stream's body and forbids the header.)
 */
final class UnreadBodyClose {
    private boolean closing;

    private UnreadBodyClose() {}

    static void handle(RoutingContext ctx) {
        HttpServerRequest request = ctx.request();
        if (request.version() != HttpVersion.HTTP_2 && hasBody(request) && !request.isEnded()) {
            UnreadBodyClose close = new UnreadBodyClose();
            ctx.addHeadersEndHandler(v -> {
                if (!request.isEnded()) {
                    close.closing = true;
                    ctx.response().putHeader(HttpHeaders.CONNECTION, HttpHeaders.CLOSE);
                }
            });
            ctx.addBodyEndHandler(v -> {
                if (close.closing) {
                    request.connection().close();
                }
            });
        }
        ctx.next();
    }

    /**
     * Whether the request announced a body. A request without one has not "ended" either while its handler
     * runs (its empty last part comes next), yet there is nothing of it left to misread.
     */
    private static boolean hasBody(HttpServerRequest request) {
        if (request.headers().contains(HttpHeaders.TRANSFER_ENCODING)) {
            return true;
        }
        String length = request.getHeader(HttpHeaders.CONTENT_LENGTH);
        return length != null && !length.trim().equals("0");
    }
}
