package dev.tandem.bench;

import dev.tandem.bench.trace.TraceRequest;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The load of {@code tandem bench load}: streamed completions against one port, either {@code
 * concurrency} streams back to back (closed loop) or arrivals at a Poisson {@code rate} (open loop),
 * {@code requests} in all and never past {@code maxMillis}. Everything runs on one Vert.x event loop
 * of its own, so the client's own cost is the same for every target.
 */
final class LoadClient {
    private static final int[] PROMPT = {1, 84, 101, 108, 108};

    private final Vertx vertx;
    private final HttpClient client;
    final AtomicInteger done = new AtomicInteger();
    final AtomicInteger errors = new AtomicInteger();

    LoadClient(Vertx vertx, HttpClient client) {
        this.vertx = vertx;
        this.client = client;
    }

    /** What one run asks for. {@code rate} 0: closed loop. */
    record Load(int concurrency, int requests, int maxTokens, double rate, long maxMillis, String model) {}

    /**
     * Runs the load against {@code port}; completes with every request's result when the last ends. The
     * streams are spread over one event loop per core, so the client is not the bottleneck of one.
     */
    Future<List<RequestResult>> run(int port, Load load) {
        done.set(0);
        errors.set(0);
        Promise<List<RequestResult>> all = Promise.promise();
        List<RequestResult> results = Collections.synchronizedList(new ArrayList<>());
        long deadline = System.nanoTime() + load.maxMillis() * 1_000_000;
        AtomicInteger issued = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        Buffer body = TraceReplay.body(load.model(), PROMPT, load.maxTokens());
        List<Context> loops = new ArrayList<>();
        for (int i = 0; i < Math.max(1, Runtime.getRuntime().availableProcessors()); i++) {
            loops.add(vertx.getOrCreateContext());
        }
        Runnable[] next = new Runnable[1];
        next[0] = () -> {
            int index = issued.getAndIncrement();
            if (index >= load.requests() || System.nanoTime() > deadline) {
                issued.decrementAndGet();
                if (finished.get() == issued.get()) {
                    all.tryComplete(List.copyOf(results));
                }
                return;
            }
            one(port, index, body, load.maxTokens()).onComplete(ar -> {
                RequestResult r = ar.succeeded()
                        ? ar.result()
                        : RequestResult.failed(index, 0, PROMPT.length, 0, String.valueOf(ar.cause()));
                results.add(r);
                done.incrementAndGet();
                if (!r.ok()) {
                    errors.incrementAndGet();
                }
                finished.incrementAndGet();
                if (load.rate() <= 0) {
                    next[0].run(); // the stream goes on, on its own event loop
                } else if (finished.get() == issued.get() && issued.get() >= load.requests()) {
                    all.tryComplete(List.copyOf(results));
                }
            });
        };
        if (load.rate() <= 0) {
            for (int i = 0; i < Math.min(load.concurrency(), load.requests()); i++) {
                loops.get(i % loops.size()).runOnContext(v -> next[0].run());
            }
        } else {
            loops.get(0).runOnContext(v -> scheduleArrivals(load, loops, next[0], new Random(7), 0));
        }
        return all.future();
    }

    /** Poisson arrivals: exponential gaps at {@code rate} per second, each one request. */
    private void scheduleArrivals(Load load, List<Context> loops, Runnable send, Random random, int sent) {
        if (sent >= load.requests()) {
            return;
        }
        long gapMs = Math.max(1, Math.round(-Math.log(1 - random.nextDouble()) / load.rate() * 1000));
        vertx.setTimer(gapMs, t -> {
            loops.get(sent % loops.size()).runOnContext(v -> send.run());
            scheduleArrivals(load, loops, send, random, sent + 1);
        });
    }

    /** The body of a GET on the target (its /metrics after a run). */
    Future<Buffer> get(int port, String uri) {
        RequestOptions options = new RequestOptions()
                .setMethod(HttpMethod.GET)
                .setHost("127.0.0.1")
                .setPort(port)
                .setURI(uri);
        return client.request(options).compose(HttpClientRequest::send).compose(HttpClientResponse::body);
    }

    private Future<RequestResult> one(int port, int index, Buffer body, int maxTokens) {
        long sent = System.nanoTime();
        TraceRequest shape = new TraceRequest(0, PROMPT.length, maxTokens, new long[0]);
        RequestOptions options = new RequestOptions()
                .setMethod(HttpMethod.POST)
                .setHost("127.0.0.1")
                .setPort(port)
                .setURI("/v1/completions")
                .putHeader("Content-Type", "application/json");
        return client.request(options).compose(req -> req.send(body)).compose(resp -> {
            if (resp.statusCode() != 200) {
                return resp.body()
                        .map(b -> RequestResult.failed(
                                index, 0, PROMPT.length, TraceReplay.millisSince(sent), "HTTP " + resp.statusCode()));
            }
            SseStream stream = new SseStream(sent);
            Promise<RequestResult> result = Promise.promise();
            resp.handler(stream::feed);
            resp.exceptionHandler(result::tryFail);
            resp.endHandler(v -> result.tryComplete(stream.result(index, shape, null, null)));
            return result.future();
        });
    }
}
