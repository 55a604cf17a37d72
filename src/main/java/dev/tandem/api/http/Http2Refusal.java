package dev.tandem.api.http;

import dev.tandem.api.ErrorBodies;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.impl.ConnectionBase;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.logging.Logger;

/**
 * HTTP/2 in clear text is not served (api.md, "HTTP versions": Vert.x 5.0.7 cannot take prior knowledge
 * without also taking the h2c Upgrade, whose malformed requests it answers bare and leaves open). A client
 * that opens with the HTTP/2 preface ({@code PRI * HTTP/2.0}) is told so in HTTP/1.1: 505 with the OpenAI
 * error body, then the close. Vert.x would answer an empty 501 before any handler of ours saw the request, so
 * this sits in the connection's Netty pipeline, after the HTTP/1 decoder, until the first request head passes.
 */
public final class Http2Refusal extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = Logger.getLogger(Http2Refusal.class.getName());
    private static final String NAME = "tandem-http2-refusal";
    /** Vert.x's name for its own handler, the last of an HTTP/1.x connection's pipeline. */
    private static final String VERTX_HANDLER = "handler";
    /** Vert.x's name for the HTTP/1.x request decoder. */
    private static final String HTTP1_DECODER = "httpDecoder";

    private boolean refused;

    private Http2Refusal() {}

    /** For {@code HttpServer.connectionHandler}: installs the refusal, then hands the connection on. */
    public static Handler<HttpConnection> guard(Handler<HttpConnection> next) {
        return connection -> {
            install(connection);
            next.handle(connection);
        };
    }

    private static void install(HttpConnection connection) {
        // Vert.x gives no public way to its pipeline; without one the preface keeps Vert.x's 501.
        if (connection instanceof ConnectionBase base) {
            ChannelPipeline pipeline = base.channelHandlerContext().pipeline();
            // HTTP/1 pipelines only: an HTTP/2 connection negotiated by ALPN over TLS has no HTTP/1 decoder.
            if (pipeline.get(VERTX_HANDLER) != null
                    && pipeline.get(HTTP1_DECODER) != null
                    && pipeline.get(NAME) == null) {
                pipeline.addBefore(VERTX_HANDLER, NAME, new Http2Refusal());
            }
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (refused) {
            ReferenceCountUtil.release(msg); // the rest of the preface and the client's frames
            return;
        }
        if (!(msg instanceof HttpRequest request) || request.protocolVersion().majorVersion() < 2) {
            if (msg instanceof HttpRequest) {
                ctx.pipeline().remove(this); // only a connection's first bytes can be a preface
            }
            ctx.fireChannelRead(msg);
            return;
        }
        refused = true;
        String version = request.protocolVersion().text();
        ReferenceCountUtil.release(msg);
        String peer = ctx.channel().remoteAddress() instanceof InetSocketAddress a
                ? a.getHostString() + ":" + a.getPort()
                : String.valueOf(ctx.channel().remoteAddress());
        LOG.warning("HTTP connection from " + peer + " spoke " + version
                + " (HTTP/2 prior knowledge?); answered 505 and closed");
        byte[] body = ErrorBodies.body(
                        version + " is not served here: send HTTP/1.1 (HTTP/2 in clear text, h2c, is not supported;"
                                + " reach an HTTP/2 front end through TLS instead)",
                        "invalid_request_error",
                        null,
                        "http_version_not_supported")
                .encode()
                .getBytes(StandardCharsets.UTF_8);
        FullHttpResponse response = new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1, HttpResponseStatus.HTTP_VERSION_NOT_SUPPORTED, Unpooled.wrappedBuffer(body));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .set(HttpHeaderNames.CONTENT_LENGTH, body.length)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
}
