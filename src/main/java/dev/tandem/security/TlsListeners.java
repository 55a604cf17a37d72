package dev.tandem.security;

import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.NetServerOptions;

/** Puts a surface's TLS on its listener's options (HTTP and TCP alike). */
public final class TlsListeners {
    private TlsListeners() {}

    /** The options with TLS from {@code files}; {@code alpn} offers HTTP/2 beside HTTP/1.1 (HTTP listeners). */
    public static <T extends NetServerOptions> T secure(T options, TlsFiles files, boolean alpn) {
        options.setSsl(true);
        options.setUseAlpn(alpn);
        options.setKeyCertOptions(files.keyCert());
        if (files.clientCa() != null) {
            options.setTrustOptions(files.clientTrust());
            options.setClientAuth(ClientAuth.REQUIRED);
        }
        // A client that opens a connection and never finishes its handshake holds it no longer than this.
        options.setSslHandshakeTimeout(10);
        options.setSslHandshakeTimeoutUnit(java.util.concurrent.TimeUnit.SECONDS);
        return options;
    }
}
