package dev.tandem.upstream;

import dev.tandem.config.UpstreamSettings;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * HTTP to one upstream server. Every call has a deadline ({@code upstream-timeout-ms}, applied as the
 * request's idle timeout: no byte for that long fails it), so a stuck upstream is a failure, not a
 * hang. Calls may be made from any thread; their futures complete on the caller's context.
 */
public final class UpstreamClient {
    private final Vertx vertx;
    private final HttpClientAgent http;
    private final URI base;
    private final long timeoutMs;
    /** A hang guard over a whole call: connecting, then the idle timeout. */
    private final long guardMs;

    public UpstreamClient(Vertx vertx, UpstreamSettings settings) {
        this.vertx = vertx;
        this.base = settings.uri();
        this.timeoutMs = settings.timeoutMs();
        this.guardMs = Math.min(timeoutMs, 10_000) + timeoutMs + 1_000;
        this.http = vertx.createHttpClient(
                new HttpClientOptions()
                        .setConnectTimeout((int) Math.min(timeoutMs, 10_000))
                        .setKeepAlive(true)
                        .setSsl("https".equals(base.getScheme())),
                // One connection per stream in flight: HTTP/1.1 cannot share one between streams.
                new PoolOptions().setHttp1MaxSize(1024));
    }

    public String baseUrl() {
        return base.toString();
    }

    public Future<Void> close() {
        return http.close();
    }

    private RequestOptions options(HttpMethod method, String path) {
        int port = base.getPort() > 0 ? base.getPort() : ("https".equals(base.getScheme()) ? 443 : 80);
        String prefix = base.getPath() == null ? "" : base.getPath();
        return new RequestOptions()
                .setMethod(method)
                .setHost(base.getHost())
                .setPort(port)
                .setURI(prefix + path)
                .setIdleTimeout(timeoutMs)
                .putHeader("Accept", "application/json, text/event-stream");
    }

    /** GET, the whole body as text when 2xx. */
    public Future<String> getText(String path) {
        return http.request(options(HttpMethod.GET, path))
                .compose(HttpClientRequest::send)
                .compose(r -> r.body().compose(body -> ok(r, body).map(b -> b.toString())))
                .timeout(guardMs, TimeUnit.MILLISECONDS)
                .recover(e -> wrap(e, "GET " + path));
    }

    public Future<JsonObject> getJson(String path) {
        return getText(path).map(UpstreamClient::json);
    }

    /** POST a JSON body, the JSON answer when 2xx. */
    public Future<JsonObject> postJson(String path, JsonObject body) {
        return postJson(path, body, new Cancel());
    }

    /** The same, closed (and failed) when {@code cancel} fires. */
    public Future<JsonObject> postJson(String path, JsonObject body, Cancel cancel) {
        return http.request(options(HttpMethod.POST, path).putHeader("Content-Type", "application/json"))
                .compose(req -> {
                    cancel.onCancel(req::reset);
                    return req.send(body.toBuffer());
                })
                .compose(r -> r.body().compose(b -> ok(r, b)))
                .map(b -> json(b.toString()))
                .timeout(guardMs, TimeUnit.MILLISECONDS)
                .onFailure(e -> cancel.cancel())
                .recover(e -> wrap(e, "POST " + path));
    }

    /**
     * POST a JSON body and read the answer as server-sent events. The returned future completes once the
     * upstream answered 2xx (or fails with its status and message); events then go to {@code onEvent}
     * and the stream's end (after {@code [DONE]}) or failure to {@link Stream#ended}.
     */
    public Future<Stream> stream(String path, JsonObject body, Cancel cancel, Consumer<JsonObject> onEvent) {
        Promise<Void> ended = Promise.promise();
        return http.request(options(HttpMethod.POST, path).putHeader("Content-Type", "application/json"))
                .compose(req -> {
                    cancel.onCancel(() -> {
                        ended.tryFail(new UpstreamException(0, "cancelled"));
                        req.reset();
                    });
                    return req.send(body.toBuffer());
                })
                .compose(r -> {
                    HttpClientRequest req = r.request();
                    if (r.statusCode() / 100 != 2) {
                        return r.body().compose(b -> ok(r, b)).map(b -> (Stream) null);
                    }
                    Stream s = new Stream(req, ended.future());
                    SseEvents events = new SseEvents(onEvent);
                    // The request's idle timeout stops at the headers: a stream gone silent is caught here.
                    IdleTimer idle = new IdleTimer(vertx, timeoutMs, () -> {
                        ended.tryFail(new UpstreamException(
                                0, "the upstream's stream sent nothing for " + timeoutMs + " ms"));
                        req.reset();
                    });
                    ended.future().onComplete(x -> idle.stop());
                    r.handler(bytes -> {
                        idle.touch();
                        try {
                            events.push(bytes);
                        } catch (RuntimeException e) {
                            ended.tryFail(e);
                            req.reset();
                        }
                    });
                    r.exceptionHandler(e -> ended.tryFail(wrapCause(e)));
                    r.endHandler(v -> {
                        if (events.done()) {
                            ended.tryComplete();
                        } else {
                            ended.tryFail(new UpstreamException(0, "the upstream's stream ended without [DONE]"));
                        }
                    });
                    return Future.succeededFuture(s);
                })
                .timeout(guardMs, TimeUnit.MILLISECONDS)
                .onFailure(e -> cancel.cancel())
                .recover(e -> wrap(e, "POST " + path));
    }

    /** Closes a call in flight: its connection is reset, so the upstream aborts the request. */
    public static final class Cancel {
        private Runnable action;
        private boolean cancelled;

        public synchronized void cancel() {
            cancelled = true;
            if (action != null) {
                action.run();
            }
        }

        synchronized void onCancel(Runnable action) {
            this.action = action;
            if (cancelled) {
                action.run();
            }
        }
    }

    /** One open event stream; {@link #cancel} closes it (the upstream sees the client go away and aborts). */
    public static final class Stream {
        private final HttpClientRequest request;
        private final Future<Void> ended;

        Stream(HttpClientRequest request, Future<Void> ended) {
            this.request = request;
            this.ended = ended;
        }

        public Future<Void> ended() {
            return ended;
        }

        public void cancel() {
            if (!ended.isComplete()) {
                request.reset();
            }
        }
    }

    private static Future<Buffer> ok(HttpClientResponse r, Buffer body) {
        if (r.statusCode() / 100 == 2) {
            return Future.succeededFuture(body);
        }
        return Future.failedFuture(new UpstreamException(r.statusCode(), errorMessage(r.statusCode(), body)));
    }

    /** The message of an error body in either shape vLLM and SGLang use, else the body itself. */
    static String errorMessage(int status, Buffer body) {
        String text = body.toString();
        try {
            JsonObject json = new JsonObject(text);
            Object error = json.getValue("error");
            if (error instanceof JsonObject e && e.getString("message") != null) {
                return e.getString("message");
            }
            if (json.getString("message") != null) {
                return json.getString("message");
            }
            if (error instanceof String s) {
                return s;
            }
        } catch (DecodeException | ClassCastException e) {
            // not JSON: the text is the message
        }
        return text.isBlank() ? "the upstream answered HTTP " + status : text;
    }

    private static JsonObject json(String text) {
        try {
            return new JsonObject(text);
        } catch (DecodeException | ClassCastException e) {
            throw new UpstreamException(0, "the upstream's answer is not a JSON object");
        }
    }

    /** A failure named with its call: which of a worker's calls hung is what an operator asks first. */
    private static <T> Future<T> wrap(Throwable t, String call) {
        if (t instanceof java.util.concurrent.TimeoutException) {
            return Future.failedFuture(new UpstreamException(
                    "the upstream failed: no answer to " + call + " (" + t.getMessage() + ")", t));
        }
        return Future.failedFuture(wrapCause(t));
    }

    private static UpstreamException wrapCause(Throwable t) {
        if (t instanceof UpstreamException u) {
            return u;
        }
        String what = t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
        return new UpstreamException("the upstream failed: " + what, t);
    }
}
