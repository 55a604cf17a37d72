package dev.tandem.api.http;

import dev.tandem.api.ErrorBodies;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code Expect}: the only expectation HTTP defines, {@code 100-continue}, is met (the body handler sends the
 * 100); any other is answered 417 before anything else looks at the request (RFC 9110, 10.1.1), rather than
 * ignored: a client that asks for a behaviour must learn it will not get it.
 */
final class ExpectHeader {
    private ExpectHeader() {}

    static void handle(RoutingContext ctx) {
        for (String value : ctx.request().headers().getAll(HttpHeaders.EXPECT)) {
            for (String expectation : value.split(",", -1)) {
                String e = expectation.trim();
                if (!e.isEmpty() && !e.equalsIgnoreCase("100-continue")) {
                    ErrorResponses.send(
                            ctx.response(),
                            417,
                            ErrorBodies.body(
                                    "the expectation '" + JsonRequestBody.printable(e)
                                            + "' cannot be met: only 100-continue is supported",
                                    "invalid_request_error",
                                    null,
                                    "expectation_failed"));
                    return;
                }
            }
        }
        ctx.next();
    }
}
