package dev.tandem.api.http;

import dev.tandem.router.GenerationFailure;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import dev.tandem.api.ApiException;

/** Errors in the OpenAI shape: {@code {"error": {"message", "type", "param", "code"}}}. */
public final class ErrorResponses {
  private ErrorResponses() {
  }

  public static JsonObject body(String message, String type, String param, String code) {
    return new JsonObject().put("error", new JsonObject()
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

  public static void send(HttpServerResponse response, int status, JsonObject body) {
    if (response.headWritten() || response.ended() || response.closed()) {
      return;
    }
    response.setStatusCode(status)
        .putHeader("Content-Type", "application/json")
        .end(body.encode());
  }

  public static void send(HttpServerResponse response, ApiException e) {
    send(response, e.status(), body(e));
  }

  public static void send(HttpServerResponse response, GenerationFailure f) {
    if (f.status() == 429 && !response.headWritten()) {
      response.putHeader("Retry-After", "1");
    }
    send(response, f.status(), body(f));
  }
}
