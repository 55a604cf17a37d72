package dev.tandem.tracing;

import com.google.protobuf.ByteString;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * An OTLP trace collector in the test JVM, on 127.0.0.1: OTLP/HTTP with protobuf or JSON bodies at
 * {@code /v1/traces}, and OTLP/gRPC (HTTP/2 without TLS, length-prefixed protobuf, status in trailers)
 * on the same port. Decodes with the protocol's own generated classes (protobuf) or by the OTLP JSON
 * mapping, so what it records is what a real collector would.
 */
public final class OtlpReceiver implements AutoCloseable {

    /** One span as received, with its process's resource attributes and the protocol it came over. */
    public record ReceivedSpan(
            String protocol,
            String service,
            String instance,
            String traceId,
            String spanId,
            String parentSpanId,
            String name,
            String kind) {}

    private static final HexFormat HEX = HexFormat.of();
    private final Vertx vertx = Vertx.vertx();
    private final HttpServer server;
    private final List<ReceivedSpan> spans = new CopyOnWriteArrayList<>();
    private final List<String> errors = new CopyOnWriteArrayList<>();

    public OtlpReceiver() {
        server = vertx.createHttpServer(
                        new HttpServerOptions().setHost("127.0.0.1").setPort(0))
                .requestHandler(this::handle)
                .listen()
                .await();
    }

    public int port() {
        return server.actualPort();
    }

    public String httpUrl() {
        return "http://127.0.0.1:" + port() + "/v1/traces";
    }

    public String grpcUrl() {
        return "http://127.0.0.1:" + port();
    }

    public List<ReceivedSpan> spans() {
        return List.copyOf(spans);
    }

    /** Requests it could not decode: a test checks there were none. */
    public List<String> errors() {
        return List.copyOf(errors);
    }

    /** Waits (at most {@code timeout}) until the spans received satisfy {@code done}; the spans either way. */
    public List<ReceivedSpan> await(Predicate<List<ReceivedSpan>> done, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!done.test(spans()) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        return spans();
    }

    private void handle(HttpServerRequest req) {
        req.body().onSuccess(body -> {
            String type = String.valueOf(req.getHeader("content-type"));
            try {
                if (type.startsWith("application/grpc")) {
                    int length = body.getInt(1);
                    record(ExportTraceServiceRequest.parseFrom(body.getBytes(5, 5 + length)), "grpc");
                    req.response()
                            .putHeader("content-type", "application/grpc")
                            .putTrailer("grpc-status", "0")
                            .end(Buffer.buffer(new byte[5])); // an empty ExportTraceServiceResponse, framed
                } else if (type.startsWith("application/json")) {
                    recordJson(body.toJsonObject());
                    req.response().putHeader("content-type", "application/json").end("{}");
                } else {
                    record(ExportTraceServiceRequest.parseFrom(body.getBytes()), "http/protobuf");
                    req.response()
                            .putHeader("content-type", "application/x-protobuf")
                            .end();
                }
            } catch (Exception e) {
                errors.add(type + ": " + e);
                req.response().setStatusCode(400).end();
            }
        });
    }

    private void record(ExportTraceServiceRequest request, String protocol) {
        for (ResourceSpans rs : request.getResourceSpansList()) {
            Map<String, String> resource = new java.util.HashMap<>();
            for (KeyValue kv : rs.getResource().getAttributesList()) {
                resource.put(kv.getKey(), kv.getValue().getStringValue());
            }
            for (ScopeSpans ss : rs.getScopeSpansList()) {
                for (io.opentelemetry.proto.trace.v1.Span s : ss.getSpansList()) {
                    spans.add(new ReceivedSpan(
                            protocol,
                            resource.get("service.name"),
                            resource.get("service.instance.id"),
                            hex(s.getTraceId()),
                            hex(s.getSpanId()),
                            hex(s.getParentSpanId()),
                            s.getName(),
                            s.getKind().name()));
                }
            }
        }
    }

    /** The OTLP JSON mapping: ids as hex strings, kinds as enum numbers, values wrapped by type. */
    private void recordJson(JsonObject request) {
        for (Object o : request.getJsonArray("resourceSpans", new JsonArray())) {
            JsonObject rs = (JsonObject) o;
            Map<String, String> resource = new java.util.HashMap<>();
            for (Object a : rs.getJsonObject("resource").getJsonArray("attributes")) {
                JsonObject kv = (JsonObject) a;
                resource.put(kv.getString("key"), kv.getJsonObject("value").getString("stringValue"));
            }
            for (Object so : rs.getJsonArray("scopeSpans")) {
                for (Object sp : ((JsonObject) so).getJsonArray("spans")) {
                    JsonObject s = (JsonObject) sp;
                    spans.add(new ReceivedSpan(
                            "http/json",
                            resource.get("service.name"),
                            resource.get("service.instance.id"),
                            s.getString("traceId"),
                            s.getString("spanId"),
                            s.getString("parentSpanId", ""),
                            s.getString("name"),
                            io.opentelemetry.proto.trace.v1.Span.SpanKind.forNumber(s.getInteger("kind", 0))
                                    .name()));
                }
            }
        }
    }

    private static String hex(ByteString bytes) {
        return HEX.formatHex(bytes.toByteArray());
    }

    @Override
    public void close() {
        vertx.close().await();
    }
}
