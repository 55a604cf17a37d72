package dev.tandem.bench;

import dev.tandem.bench.trace.TraceRequest;
import dev.tandem.bench.trace.TraceTokens;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Replays trace requests against routers' OpenAI API as a client would: each at its arrival time
 * (divided by the time scale), a streamed completion of its prompt tokens with {@code max_tokens} =
 * its output length, spread over the routers round-robin like a load balancer in front of them. Its
 * own Vert.x HTTP client: nothing of the server's code on this path.
 */
final class TraceReplay {
    private final Vertx vertx;
    private final List<Integer> ports;
    private final String model;
    private final double timeScale;
    private final HttpClientAgent client;
    /** Whose each request is ({@code X-Tenant-Id}), by index; null: nobody's. */
    private List<String> tenants;

    final AtomicInteger done = new AtomicInteger();
    final AtomicInteger errors = new AtomicInteger();

    TraceReplay(Vertx vertx, List<Integer> ports, String model, double timeScale) {
        this.vertx = vertx;
        this.ports = List.copyOf(ports);
        this.model = model;
        this.timeScale = timeScale;
        this.client = vertx.createHttpClient(
                new HttpClientOptions().setDefaultHost("127.0.0.1").setTcpNoDelay(true),
                new PoolOptions().setHttp1MaxSize(4096).setMaxWaitQueueSize(-1));
    }

    /** Each request carries its tenant's name in {@code X-Tenant-Id}. */
    TraceReplay withTenants(List<String> tenants) {
        this.tenants = List.copyOf(tenants);
        return this;
    }

    /**
     * Sends every request at its time and completes with every result, in trace order, once all have
     * ended or {@code deadlineMs} (wall clock from the start) has passed — those still open then count
     * as errors.
     */
    Future<List<RequestResult>> replay(List<TraceRequest> requests, TraceTokens tokens, long deadlineMs) {
        List<Promise<RequestResult>> results = new ArrayList<>(requests.size());
        long start = System.nanoTime();
        for (int i = 0; i < requests.size(); i++) {
            Promise<RequestResult> promise = Promise.promise();
            results.add(promise);
            TraceRequest r = requests.get(i);
            int index = i;
            long delayMs = Math.max(1, Math.round(r.arrivalMs() / timeScale));
            vertx.setTimer(
                    delayMs,
                    t -> send(index, r, tokens, start).onComplete(ar -> {
                        RequestResult result = ar.succeeded()
                                ? ar.result()
                                : RequestResult.failed(
                                        index,
                                        r.arrivalMs(),
                                        r.inputLength(),
                                        millisSince(start),
                                        String.valueOf(ar.cause()));
                        finish(promise, result);
                    }));
        }
        vertx.setTimer(Math.max(1, deadlineMs), t -> {
            for (int i = 0; i < results.size(); i++) {
                TraceRequest r = requests.get(i);
                finish(
                        results.get(i),
                        RequestResult.failed(
                                i, r.arrivalMs(), r.inputLength(), deadlineMs, "no answer within the run's deadline"));
            }
        });
        return Future.all(results.stream().map(Promise::future).toList())
                .map(all -> results.stream().map(p -> p.future().result()).toList())
                .eventually(() -> client.close());
    }

    private void finish(Promise<RequestResult> promise, RequestResult result) {
        if (tenants != null) {
            result = result.withTenant(tenants.get(result.index()));
        }
        if (promise.tryComplete(result)) {
            done.incrementAndGet();
            if (!result.ok()) {
                errors.incrementAndGet();
            }
        }
    }

    private Future<RequestResult> send(int index, TraceRequest r, TraceTokens tokens, long runStart) {
        int port = ports.get(index % ports.size());
        // Building a 10k-token body is CPU work: off the client's event loop.
        return vertx.executeBlocking(() -> body(model, tokens.prompt(r, index), r.outputLength()), false)
                .compose(body -> {
                    long sent = System.nanoTime();
                    RequestOptions options = new RequestOptions()
                            .setMethod(HttpMethod.POST)
                            .setPort(port)
                            .setURI("/v1/completions")
                            .putHeader("Content-Type", "application/json");
                    if (tenants != null) {
                        options.putHeader("X-Tenant-Id", tenants.get(index));
                    }
                    return client.request(options)
                            .compose(req -> req.send(body))
                            .compose(resp -> read(index, r, resp, sent));
                });
    }

    private Future<RequestResult> read(int index, TraceRequest r, HttpClientResponse resp, long sent) {
        if (resp.statusCode() != 200) {
            return resp.body()
                    .map(b -> RequestResult.failed(
                            index, r.arrivalMs(), r.inputLength(), millisSince(sent), refusal(resp) + b.toString()));
        }
        SseStream stream = new SseStream(sent);
        Promise<RequestResult> result = Promise.promise();
        resp.handler(stream::feed);
        resp.exceptionHandler(e -> result.tryFail(e));
        resp.endHandler(v -> result.tryComplete(stream.result(
                index, r, resp.getHeader("X-Tandem-Prefill-Worker"), resp.getHeader("X-Tandem-Decode-Worker"))));
        return result.future();
    }

    /** The start of a failed request's error: its status, and its {@code Retry-After} when it carries one. */
    static String refusal(HttpClientResponse resp) {
        String retry = resp.getHeader("Retry-After");
        return "HTTP " + resp.statusCode() + (retry == null ? "" : " " + RETRY_AFTER + retry) + ": ";
    }

    /** How {@link #refusal} marks a {@code Retry-After}. */
    static final String RETRY_AFTER = "retry-after=";

    /** A streamed completion request, the prompt as token ids (the OpenAI API's other prompt form). */
    static Buffer body(String model, int[] prompt, int maxTokens) {
        StringBuilder sb = new StringBuilder(prompt.length * 4 + 200);
        sb.append("{\"model\":").append(io.vertx.core.json.Json.encode(model)).append(",\"prompt\":[");
        for (int i = 0; i < prompt.length; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append(prompt[i]);
        }
        sb.append("],\"max_tokens\":").append(maxTokens);
        sb.append(",\"temperature\":0,\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        return Buffer.buffer(sb.toString());
    }

    static double millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1e6;
    }
}
