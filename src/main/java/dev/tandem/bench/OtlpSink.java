package dev.tandem.bench;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The collector of {@code bench load}'s {@code tandem-traced} target: accepts OTLP/HTTP exports on
 * loopback and counts them, so the traced target pays for encoding and sending its spans as it would
 * with a real collector, whose own work is not Tandem's cost.
 */
final class OtlpSink implements AutoCloseable {
    private final HttpServer server;
    private final AtomicLong exports = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();

    private OtlpSink(HttpServer server) {
        this.server = server;
    }

    static OtlpSink start(Vertx vertx) {
        OtlpSink[] self = new OtlpSink[1];
        HttpServer server = vertx.createHttpServer(
                        new HttpServerOptions().setHost("127.0.0.1").setPort(0))
                .requestHandler(req -> req.body().onSuccess(body -> {
                    self[0].exports.incrementAndGet();
                    self[0].bytes.addAndGet(body.length());
                    req.response()
                            .putHeader("content-type", "application/x-protobuf")
                            .end();
                }));
        self[0] = new OtlpSink(server);
        server.listen().await();
        return self[0];
    }

    /** The {@code tracing} section that sends a Tandem's spans here. */
    JsonObject tracing(double sampleRate) {
        return new JsonObject()
                .put("enabled", true)
                .put("protocol", "http/protobuf")
                .put("endpoint", "http://127.0.0.1:" + server.actualPort() + "/v1/traces")
                .put("sample-rate", sampleRate);
    }

    String summary() {
        return exports.get() + " OTLP requests, " + bytes.get() / 1024 + " KiB";
    }

    @Override
    public void close() {
        server.close().await();
    }
}
