package dev.tandem.tracing;

import io.opentelemetry.exporter.internal.otlp.traces.TraceRequestMarshaler;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.tracing.TracingPolicy;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.util.Collection;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * OTLP over gRPC (HTTP/2 without TLS upgrade, one length-prefixed protobuf message, status in the
 * {@code grpc-status} trailer) or over HTTP with a JSON body, sent with the node's Vert.x HTTP client.
 * The OTLP encoding itself is the SDK's ({@link TraceRequestMarshaler}), so only the transport is ours.
 * The client ignores tracing, or exporting spans would make spans.
 */
final class VertxOtlpExporter implements SpanExporter {
    private static final Logger LOG = Logger.getLogger(VertxOtlpExporter.class.getName());
    static final String GRPC_PATH = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

    enum Wire {
        GRPC,
        JSON
    }

    private final URI target;
    private final Wire wire;
    private volatile HttpClientAgent client;
    private volatile boolean warned;

    VertxOtlpExporter(String url, Wire wire) {
        URI base = URI.create(url);
        this.target = wire == Wire.GRPC ? base.resolve(GRPC_PATH) : base;
        this.wire = wire;
    }

    void bind(Vertx vertx) {
        HttpClientOptions options = new HttpClientOptions()
                .setTracingPolicy(TracingPolicy.IGNORE)
                .setSsl("https".equals(target.getScheme()))
                .setConnectTimeout((int) OtlpSpanExporters.TIMEOUT.toMillis());
        if (wire == Wire.GRPC) {
            options.setProtocolVersion(HttpVersion.HTTP_2)
                    .setHttp2ClearTextUpgrade(false)
                    .setUseAlpn(options.isSsl());
        }
        client = vertx.createHttpClient(options);
    }

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
        HttpClientAgent http = client;
        if (http == null) {
            return CompletableResultCode.ofFailure();
        }
        Buffer body;
        try {
            body = encode(spans);
        } catch (IOException e) {
            return CompletableResultCode.ofExceptionalFailure(e);
        }
        CompletableResultCode result = new CompletableResultCode();
        RequestOptions request = new RequestOptions()
                .setMethod(HttpMethod.POST)
                .setAbsoluteURI(target.toString())
                .setTimeout(OtlpSpanExporters.TIMEOUT.toMillis());
        if (wire == Wire.GRPC) {
            request.putHeader("content-type", "application/grpc").putHeader("te", "trailers");
        } else {
            request.putHeader("content-type", "application/json");
        }
        http.request(request)
                .compose(req -> req.send(body))
                .compose(resp -> resp.body().compose(ignored -> checked(resp)))
                .onComplete(done -> {
                    if (done.succeeded()) {
                        result.succeed();
                    } else {
                        warnOnce(done.cause());
                        result.failExceptionally(done.cause());
                    }
                });
        return result;
    }

    private Buffer encode(Collection<SpanData> spans) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        TraceRequestMarshaler request = TraceRequestMarshaler.create(spans);
        if (wire == Wire.JSON) {
            request.writeJsonTo(out);
            return Buffer.buffer(out.toByteArray());
        }
        request.writeBinaryTo(out);
        byte[] message = out.toByteArray();
        // gRPC framing: uncompressed flag, 4-byte big-endian length, the message.
        return Buffer.buffer(5 + message.length)
                .appendByte((byte) 0)
                .appendInt(message.length)
                .appendBytes(message);
    }

    private Future<Void> checked(HttpClientResponse resp) {
        if (resp.statusCode() / 100 != 2) {
            return Future.failedFuture("collector answered HTTP " + resp.statusCode());
        }
        if (wire == Wire.GRPC) {
            String status = resp.trailers().get("grpc-status");
            if (status == null) {
                status = resp.headers().get("grpc-status"); // a trailers-only response
            }
            if (!"0".equals(status)) {
                return Future.failedFuture("collector answered grpc-status " + status + " "
                        + resp.trailers().get("grpc-message"));
            }
        }
        return Future.succeededFuture();
    }

    /** A missing collector must not flood the log: one warning, the rest at FINE. */
    private void warnOnce(Throwable cause) {
        Level level = warned ? Level.FINE : Level.WARNING;
        warned = true;
        LOG.log(level, "exporting spans to " + target + " failed: " + cause.getMessage());
    }

    @Override
    public CompletableResultCode flush() {
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
        HttpClientAgent http = client;
        client = null;
        if (http != null) {
            http.close();
        }
        return CompletableResultCode.ofSuccess();
    }
}
