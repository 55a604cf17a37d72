package dev.tandem.api.http;

import dev.tandem.api.ApiException;
import dev.tandem.api.ApiKind;
import dev.tandem.api.ClientSink;
import dev.tandem.api.CompletionCall;
import dev.tandem.api.OpenAiRequestParser;
import dev.tandem.api.Tenants;
import dev.tandem.router.RequestClass;
import dev.tandem.router.RequestRouter;
import io.vertx.core.Handler;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/** {@code POST /v1/completions} and {@code /v1/chat/completions}: validate, submit, answer as JSON or SSE. */
final class CompletionsHandler implements Handler<RoutingContext> {
    static final String SESSION_HEADER = "X-Session-Id";

    private final OpenAiRequestParser parser;
    private final RequestRouter router;
    private final ApiKind kind;
    private final Tenants tenants;
    private SseFlusher flusher;

    /** @param tenants who requests are from; null: everyone is the default tenant */
    CompletionsHandler(OpenAiRequestParser parser, RequestRouter router, ApiKind kind, Tenants tenants) {
        this.parser = parser;
        this.router = router;
        this.kind = kind;
        this.tenants = tenants;
    }

    /** The flusher of the loop this request runs on (the router's). */
    private SseFlusher flusher(RoutingContext ctx) {
        io.vertx.core.Context here = ctx.vertx().getOrCreateContext();
        if (flusher == null || !flusher.runsOn(here)) {
            flusher = new SseFlusher(here);
        }
        return flusher;
    }

    @Override
    public void handle(RoutingContext ctx) {
        JsonObject body;
        RequestClass flow;
        try {
            body = JsonRequestBody.read(ctx);
            flow = tenants == null
                    ? RequestClass.DEFAULT
                    : tenants.classify(ctx.request()::getHeader, body.getValue("user") instanceof String u ? u : null);
        } catch (ApiException e) {
            ErrorResponses.send(ctx.response(), e);
            return;
        }
        String session = ctx.request().getHeader(SESSION_HEADER);
        // Tokenizing (BPE merges, chat templates) is model work: off the event loop unless it is tiny.
        parser.parse(
                        ctx.vertx(),
                        body,
                        () -> kind == ApiKind.CHAT
                                ? parser.parseChat(body, session)
                                : parser.parseCompletion(body, session))
                .onComplete(ar -> {
                    if (ar.failed()) {
                        if (ar.cause() instanceof ApiException e) {
                            ErrorResponses.send(ctx.response(), e);
                        } else {
                            ctx.fail(ar.cause());
                        }
                        return;
                    }
                    if (ctx.response().closed()) {
                        return;
                    }
                    CompletionCall call = ar.result();
                    ClientSink sink = call.stream()
                            ? new SseCompletionSink(ctx.response(), call, flusher(ctx))
                            : new JsonCompletionSink(ctx.response(), call);
                    sink.attach(
                            router.submit(call.generation().withFlow(flow), sink),
                            call.generation().promptTokens().length);
                    // A client that goes away cancels its request on both workers.
                    ctx.response().closeHandler(v -> sink.abandon("the client closed the connection"));
                });
    }
}
