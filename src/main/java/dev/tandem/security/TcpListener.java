package dev.tandem.security;

import dev.tandem.config.ConnectionLimits;
import dev.tandem.config.TlsSettings;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.impl.ConnectionBase;
import java.util.function.Function;

/**
 * A TCP surface's listener (the client bridge, the worker bridge): TLS from its section's {@code tls-*} keys
 * with the certificate reloaded when the files change, and its connection limits — a connection over one
 * is sent the surface's refusal and closed before it is handed on.
 */
public final class TcpListener {
    private final Vertx vertx;
    private final String surface;
    private final TlsSettings tls;
    private final ConnectionLimiter limiter;
    private NetServer server;
    private CertificateReloader reloader;

    /** {@code surface} is the configuration section ({@code bridge}, {@code worker-bridge}). */
    public TcpListener(Vertx vertx, String surface, TlsSettings tls, ConnectionLimits limits) {
        this.vertx = vertx;
        this.surface = surface;
        this.tls = tls;
        this.limiter = new ConnectionLimiter(surface, limits);
    }

    /**
     * Listens; {@code onSocket} gets each admitted connection, {@code refusal} turns a limit's reason into the
     * frame sent before the close.
     */
    public Future<NetServer> listen(
            String host, int port, Handler<NetSocket> onSocket, Function<String, Buffer> refusal) {
        return TlsFiles.load(vertx, tls).compose(files -> {
            NetServerOptions options = new NetServerOptions().setTcpNoDelay(true);
            if (files != null) {
                TlsListeners.secure(options, files, false);
            }
            server = vertx.createNetServer(options).connectHandler(socket -> admit(socket, onSocket, refusal));
            return server.listen(port, host).onSuccess(s -> {
                if (files != null) {
                    reloader = new CertificateReloader(
                            vertx, surface, tls, files, false, o -> s.updateSSLOptions(o, true));
                    reloader.start();
                }
            });
        });
    }

    private void admit(NetSocket socket, Handler<NetSocket> onSocket, Function<String, Buffer> refusal) {
        String address = socket.remoteAddress() == null
                ? "unknown"
                : socket.remoteAddress().hostAddress();
        String refused = limiter.admit(address);
        if (refused != null) {
            socket.end(refusal.apply(refused));
            return;
        }
        if (socket instanceof ConnectionBase base) {
            base.closeFuture().onComplete(v -> limiter.release(address));
        }
        onSocket.handle(socket);
    }

    public int port() {
        return server.actualPort();
    }

    public int connections() {
        return limiter.open();
    }

    public Future<Void> close() {
        if (reloader != null) {
            reloader.stop();
        }
        return server == null ? Future.succeededFuture() : server.close();
    }
}
