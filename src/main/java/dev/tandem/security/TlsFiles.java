package dev.tandem.security;

import dev.tandem.config.TlsSettings;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.ServerSSLOptions;
import java.util.Arrays;

/**
 * The bytes of a surface's PEM files as read at one moment: what its listener's TLS is built from, and what
 * {@link CertificateReloader} compares to notice a rotation. Holding the bytes (not the paths) makes a change
 * of content a change of options, and a half-written file is caught by {@link #check} before it is used.
 */
public record TlsFiles(Buffer cert, Buffer key, Buffer clientCa) {

    /** Reads the files without blocking the event loop. */
    public static Future<TlsFiles> read(Vertx vertx, TlsSettings tls) {
        var fs = vertx.fileSystem();
        Future<Buffer> ca = tls.clientAuth() ? fs.readFile(tls.clientCa()) : Future.succeededFuture(null);
        return Future.all(fs.readFile(tls.cert()), fs.readFile(tls.key()), ca)
                .map(all -> new TlsFiles(all.resultAt(0), all.resultAt(1), all.resultAt(2)));
    }

    /**
     * A listener's files at start-up, read and checked on a worker thread; null when the surface has no TLS. A
     * key that does not belong to its certificate fails the start, not every handshake.
     */
    public static Future<TlsFiles> load(Vertx vertx, TlsSettings tls) {
        if (!tls.enabled()) {
            return Future.succeededFuture(null);
        }
        return vertx.executeBlocking(
                () -> {
                    TlsFiles files = readNow(tls);
                    files.check(vertx);
                    return files;
                },
                false);
    }

    /** Reads the files now (blocking). */
    public static TlsFiles readNow(TlsSettings tls) {
        try {
            return new TlsFiles(bytes(tls.cert()), bytes(tls.key()), tls.clientAuth() ? bytes(tls.clientCa()) : null);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("cannot read the TLS files: " + e.getMessage(), e);
        }
    }

    private static Buffer bytes(String path) throws java.io.IOException {
        return Buffer.buffer(java.nio.file.Files.readAllBytes(java.nio.file.Path.of(path)));
    }

    /** Checks that the key belongs to the certificate and the CA file parses (throws why not); the leaf. */
    public java.security.cert.X509Certificate check(Vertx vertx) throws java.security.GeneralSecurityException {
        PemIdentity identity = PemIdentity.parse(vertx, cert, key);
        if (clientCa != null) {
            PemIdentity.authorities(vertx, clientCa);
        }
        return identity.leaf();
    }

    /** The listener's TLS: these files, client certificates required when a client CA is given. */
    public ServerSSLOptions serverOptions(boolean alpn) {
        ServerSSLOptions options =
                new ServerSSLOptions().setKeyCertOptions(keyCert()).setUseAlpn(alpn);
        if (clientCa != null) {
            options.setTrustOptions(clientTrust()).setClientAuth(ClientAuth.REQUIRED);
        }
        return options;
    }

    PemKeyCertOptions keyCert() {
        return new PemKeyCertOptions().setCertValue(cert).setKeyValue(key);
    }

    PemTrustOptions clientTrust() {
        return new PemTrustOptions().addCertValue(clientCa);
    }

    /** Same content, byte for byte. */
    public boolean sameAs(TlsFiles other) {
        return other != null
                && Arrays.equals(cert.getBytes(), other.cert.getBytes())
                && Arrays.equals(key.getBytes(), other.key.getBytes())
                && (clientCa == null
                        ? other.clientCa == null
                        : other.clientCa != null && Arrays.equals(clientCa.getBytes(), other.clientCa.getBytes()));
    }
}
