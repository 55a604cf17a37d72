package dev.tandem.config;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * TLS of one listening surface (the keys {@code tls-cert}, {@code tls-key}, {@code tls-client-ca} and
 * {@code tls-required} of {@code http}, {@code bridge} and {@code worker-bridge}; each also
 * {@code TANDEM_<SECTION>_TLS_<KEY>}): PEM file paths, read again when they change.
 *
 * @param cert     the certificate chain, leaf first; empty = the surface speaks clear text
 * @param key      the certificate's private key (PKCS#8 or PKCS#1/SEC1)
 * @param clientCa when set, every client must present a certificate issued by this CA (mutual TLS)
 * @param required the surface must speak TLS: start-up fails without a certificate, and a clear-text
 *                 listener beside it ({@code http.plain-port}) refuses requests instead of serving them
 */
public record TlsSettings(String cert, String key, String clientCa, boolean required) {
    public static final TlsSettings NONE = new TlsSettings("", "", "", false);

    static TlsSettings read(ConfigSection s) {
        TlsSettings t = new TlsSettings(
                s.string("tls-cert", "").trim(),
                s.string("tls-key", "").trim(),
                s.string("tls-client-ca", "").trim(),
                s.bool("tls-required", false));
        if (t.cert.isEmpty() != t.key.isEmpty()) {
            throw new ConfigException("'" + s.key("tls-cert") + "' and '" + s.key("tls-key")
                    + "' go together: set both (TLS) or neither (clear text)");
        }
        if (!t.enabled() && !t.clientCa.isEmpty()) {
            throw new ConfigException("'" + s.key("tls-client-ca") + "' needs '" + s.key("tls-cert") + "' and '"
                    + s.key("tls-key") + "': client certificates are checked in a TLS handshake");
        }
        if (t.required && !t.enabled()) {
            throw new ConfigException("'" + s.key("tls-required") + "' is true but '" + s.key("tls-cert") + "' and '"
                    + s.key("tls-key") + "' are not set: this surface would speak clear text");
        }
        readable(s, "tls-cert", t.cert);
        readable(s, "tls-key", t.key);
        readable(s, "tls-client-ca", t.clientCa);
        return t;
    }

    /** A missing file fails start-up with its key, not the first handshake with a stack trace. */
    private static void readable(ConfigSection s, String name, String path) {
        if (!path.isEmpty() && !Files.isReadable(Path.of(path))) {
            throw new ConfigException("'" + s.key(name) + "' names " + path + ", which is not a readable file");
        }
    }

    public boolean enabled() {
        return !cert.isEmpty();
    }

    public boolean clientAuth() {
        return !clientCa.isEmpty();
    }

    /** {@code https}/{@code wss}/{@code tls} scheme prefix for log lines: what a client must speak. */
    public String scheme(String plain, String secure) {
        return enabled() ? secure : plain;
    }
}
