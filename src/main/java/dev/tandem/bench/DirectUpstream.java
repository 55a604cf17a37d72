package dev.tandem.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;

/**
 * The floor of {@code tandem bench load}: an HTTP server that answers a streamed completion with the
 * SSE chunks Tandem sends — one per token, then the usage chunk and {@code [DONE]} — doing no work at
 * all. Whatever a target adds over it is that target's.
 */
final class DirectUpstream {
    private final HttpServer server;

    private DirectUpstream(HttpServer server) {
        this.server = server;
    }

    /** With {@code itlMs} > 0 the first token goes at once and each next one that much later, as Tandem's. */
    static Future<DirectUpstream> start(Vertx vertx, int itlMs) {
        return vertx.createHttpServer()
                .requestHandler(request -> handle(vertx, request, itlMs))
                .listen(0, "127.0.0.1")
                .map(DirectUpstream::new);
    }

    int port() {
        return server.actualPort();
    }

    Future<Void> close() {
        return server.close();
    }

    private static void handle(Vertx vertx, HttpServerRequest request, int itlMs) {
        request.body().onSuccess(body -> {
            int maxTokens;
            try {
                maxTokens = new JsonObject(body).getInteger("max_tokens", 16);
            } catch (RuntimeException e) {
                request.response().setStatusCode(400).end();
                return;
            }
            var response = request.response()
                    .setChunked(true)
                    .putHeader("Content-Type", "text/event-stream")
                    .putHeader("Cache-Control", "no-cache");
            long created = System.currentTimeMillis() / 1000;
            if (itlMs <= 0) {
                for (int i = 0; i < maxTokens; i++) {
                    response.write(chunk(created, "a", 97, null, null));
                }
                finish(response, created, maxTokens);
                return;
            }
            response.write(chunk(created, "a", 97, null, null));
            int[] sent = {1};
            long timer = vertx.setPeriodic(itlMs, itlMs, id -> {
                if (sent[0] == maxTokens || response.closed()) {
                    vertx.cancelTimer(id);
                    if (!response.closed()) {
                        finish(response, created, maxTokens);
                    }
                    return;
                }
                response.write(chunk(created, "a", 97, null, null));
                sent[0]++;
            });
            response.closeHandler(v -> vertx.cancelTimer(timer));
        });
    }

    private static void finish(HttpServerResponse response, long created, int maxTokens) {
        response.write(chunk(created, "", -1, "length", maxTokens));
        response.end("data: [DONE]\n\n");
    }

    private static Buffer chunk(long created, String text, int token, String finish, Integer completionTokens) {
        StringBuilder sb = new StringBuilder(220)
                .append("data: {\"id\":\"cmpl-direct\",\"object\":\"text_completion\",\"created\":")
                .append(created)
                .append(",\"model\":\"direct\",\"choices\":[{\"index\":0,\"text\":\"")
                .append(text)
                .append("\",\"token_ids\":[")
                .append(token >= 0 ? Integer.toString(token) : "")
                .append("],\"logprobs\":null,\"finish_reason\":")
                .append(finish == null ? "null" : "\"" + finish + "\"")
                .append("}]");
        if (completionTokens != null) {
            sb.append(",\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":")
                    .append(completionTokens)
                    .append(",\"total_tokens\":")
                    .append(completionTokens + 4)
                    .append(",\"prompt_tokens_details\":{\"cached_tokens\":0}}");
        }
        return Buffer.buffer(sb.append("}\n\n").toString());
    }
}
