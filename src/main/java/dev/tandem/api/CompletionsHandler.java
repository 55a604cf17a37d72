package dev.tandem.api;

import dev.tandem.router.DisaggRouter;
import dev.tandem.router.TokenSink;
import io.vertx.core.Handler;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/** {@code POST /v1/completions}: validate, submit to the router, answer as JSON or SSE. */
final class CompletionsHandler implements Handler<RoutingContext> {
  static final String SESSION_HEADER = "X-Session-Id";

  private final CompletionRequestParser parser;
  private final DisaggRouter router;

  CompletionsHandler(CompletionRequestParser parser, DisaggRouter router) {
    this.parser = parser;
    this.router = router;
  }

  @Override
  public void handle(RoutingContext ctx) {
    CompletionCall call;
    try {
      call = parser.parse(jsonBody(ctx), ctx.request().getHeader(SESSION_HEADER));
    } catch (ApiException e) {
      ErrorResponses.send(ctx.response(), e);
      return;
    }
    TokenSink sink = call.stream()
        ? new SseCompletionSink(ctx.response(), call.model())
        : new JsonCompletionSink(ctx.response(), call.model());
    DisaggRouter.Handle handle = router.submit(call.generation(), sink);
    // A client that goes away cancels its request on both workers.
    ctx.response().closeHandler(v -> handle.cancel());
  }

  static JsonObject jsonBody(RoutingContext ctx) {
    String contentType = ctx.request().getHeader("Content-Type");
    if (contentType != null && !contentType.toLowerCase(java.util.Locale.ROOT).startsWith("application/json")) {
      throw new ApiException(415, "invalid_request_error", null, "unsupported_media_type",
          "Content-Type must be application/json, got '" + contentType + "'");
    }
    io.vertx.core.buffer.Buffer body = ctx.body() == null ? null : ctx.body().buffer();
    if (body == null || body.length() == 0) {
      throw new ApiException(400, "invalid_request_error", null, "invalid_json", "the request body is empty");
    }
    Object parsed;
    try {
      parsed = io.vertx.core.json.Json.decodeValue(body);
    } catch (DecodeException e) {
      throw new ApiException(400, "invalid_request_error", null, "invalid_json",
          "the request body is not valid JSON: " + e.getMessage());
    }
    if (!(parsed instanceof JsonObject json)) {
      throw new ApiException(400, "invalid_request_error", null, "invalid_json", "the request body must be a JSON object");
    }
    return json;
  }
}
