package dev.tandem.api;

import dev.tandem.router.GenerationFailure;
import io.vertx.core.json.JsonObject;

/**
 * Errors in the OpenAI shape, {@code {"error": {"message", "type", "param", "code"}}}, as every
 * transport writes them: HTTP bodies, SSE events, WebSocket and bridge frames.
 */
public final class ErrorBodies {
    private ErrorBodies() {}

    public static JsonObject body(String message, String type, String param, String code) {
        return new JsonObject()
                .put(
                        "error",
                        new JsonObject()
                                .put("message", message)
                                .put("type", type)
                                .put("param", param)
                                .put("code", code));
    }

    public static JsonObject body(ApiException e) {
        return body(e.getMessage(), e.type(), e.param(), e.code());
    }

    public static JsonObject body(GenerationFailure f) {
        return body(f.getMessage(), f.type(), null, f.code());
    }
}
