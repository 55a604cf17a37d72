package dev.tandem.api.http;

import dev.tandem.api.ApiException;
import dev.tandem.api.ErrorBodies;
import dev.tandem.router.GenerationFailure;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;

/** HTTP error responses: the status, and the OpenAI-shaped body of {@link ErrorBodies}. */
public final class ErrorResponses {
    private ErrorResponses() {}

    public static void send(HttpServerResponse response, int status, JsonObject body) {
        if (response.headWritten() || response.ended() || response.closed()) {
            return;
        }
        response.setStatusCode(status)
                .putHeader("Content-Type", "application/json")
                .end(body.encode());
    }

    public static void send(HttpServerResponse response, ApiException e) {
        send(response, e.status(), ErrorBodies.body(e));
    }

    public static void send(HttpServerResponse response, GenerationFailure f) {
        if (!response.headWritten()) {
            f.headers().forEach(response::putHeader);
        }
        send(response, f.status(), ErrorBodies.body(f));
    }
}
