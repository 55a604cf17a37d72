package dev.tandem.bench;

import dev.tandem.bench.trace.TraceRequest;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The soak's HTTP requests: {@code /v1/completions} and {@code /v1/chat/completions}, streamed (SSE, read
 * by {@link SseStream}) or not (one JSON answer). A stream planned for a cancel is reset after its first
 * chunks with text: over HTTP/1.1 that closes the connection, which is how a client that goes away
 * cancels.
 */
final class SoakHttp {
    private final HttpClient client;
    private final SoakEndpoint endpoint;

    SoakHttp(HttpClient client, SoakEndpoint endpoint) {
        this.client = client;
        this.endpoint = endpoint;
    }

    SoakCall send(SoakRequest r, JsonObject body) {
        SoakCall call = new SoakCall();
        RequestOptions options = endpoint.options(
                        HttpMethod.POST, r.kind().chat ? "/v1/chat/completions" : "/v1/completions")
                .putHeader("Content-Type", "application/json");
        client.request(options).onFailure(e -> call.end(transport(e))).onSuccess(req -> {
            if (call.future().isComplete()) {
                req.reset(); // timed out while waiting for a connection: never sent
                return;
            }
            call.onStop(req::reset);
            req.send(body.toBuffer())
                    .onFailure(e -> call.end(transport(e)))
                    .onSuccess(resp -> answered(r, call, req, resp));
        });
        return call;
    }

    private static void answered(SoakRequest r, SoakCall call, HttpClientRequest req, HttpClientResponse resp) {
        if (resp.statusCode() / 100 != 2) {
            int status = resp.statusCode();
            resp.body()
                    .onComplete(b -> call.end(SoakResult.failed(
                            SoakError.ofStatus(status), "HTTP " + status + (b.succeeded() ? " " + b.result() : ""))));
            return;
        }
        if (!r.kind().streamed) {
            resp.body().onFailure(e -> call.end(transport(e))).onSuccess(b -> call.end(json(r, b, call)));
            return;
        }
        SseStream stream = new SseStream(call.sentNanos(), r.keepsText());
        resp.handler(bytes -> guarded(call, () -> {
            stream.feed(bytes);
            if (r.cancelAfterChunks() > 0
                    && stream.textChunks() >= r.cancelAfterChunks()
                    && call.end(SoakResult.cancelled(stream.firstTokenMs()))) {
                req.reset();
            }
        }));
        resp.exceptionHandler(e -> call.end(transport(e)));
        resp.endHandler(v -> guarded(call, () -> {
            RequestResult result = stream.result((int) r.index(), new TraceRequest(0, 1, r.maxTokens()), null, null);
            call.end(
                    result.ok()
                            ? SoakResult.completed(result.ttftMs(), result.e2eMs(), stream.text())
                            : SoakResult.failed(SoakError.STREAM, result.error()));
        }));
    }

    /** A handler that throws ends its call as a stream error at once, instead of leaving it to time out. */
    static void guarded(SoakCall call, Runnable handler) {
        try {
            handler.run();
        } catch (RuntimeException e) {
            call.end(SoakResult.failed(SoakError.STREAM, "unreadable answer: " + e));
        }
    }

    /** A JSON answer: complete when it has a choice with its text and the usage. */
    static SoakResult json(SoakRequest r, Buffer body, SoakCall call) {
        try {
            JsonObject answer = body.toJsonObject();
            JsonArray choices = answer.getJsonArray("choices");
            if (choices == null || choices.isEmpty() || answer.getJsonObject("usage") == null) {
                return SoakResult.failed(SoakError.STREAM, "no choice or usage in " + abbreviated(body));
            }
            JsonObject choice = choices.getJsonObject(0);
            String text = r.kind().chat
                    ? choice.getJsonObject("message", new JsonObject()).getString("content")
                    : choice.getString("text");
            return SoakResult.completed(Double.NaN, call.millisSinceSent(), text);
        } catch (DecodeException | ClassCastException e) {
            return SoakResult.failed(SoakError.STREAM, "unreadable answer " + abbreviated(body));
        }
    }

    static SoakResult transport(Throwable e) {
        return SoakResult.failed(SoakError.TRANSPORT, String.valueOf(e));
    }

    private static String abbreviated(Buffer body) {
        String s = body.toString();
        return s.length() > 200 ? s.substring(0, 200) + "…" : s;
    }
}
