package dev.tandem.api.http;

import dev.tandem.api.ApiKeys;
import dev.tandem.api.ErrorBodies;
import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import java.util.List;

/** Requires {@code Authorization: Bearer <key>} with one of the configured keys ({@link ApiKeys}). */
final class ApiKeyHandler implements Handler<RoutingContext> {
    private final ApiKeys keys;

    ApiKeyHandler(List<String> keys) {
        this.keys = new ApiKeys(keys);
    }

    @Override
    public void handle(RoutingContext ctx) {
        String header = ctx.request().getHeader("Authorization");
        if (keys.accepts(header)) {
            ctx.next();
            return;
        }
        ErrorResponses.send(
                ctx.response(),
                401,
                ErrorBodies.body(
                        header == null
                                ? "You didn't provide an API key: send it as 'Authorization: Bearer <key>'"
                                : "Incorrect API key provided",
                        "invalid_request_error",
                        null,
                        "invalid_api_key"));
    }
}
