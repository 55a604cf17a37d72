package dev.tandem;

import dev.tandem.config.ClusterTls;
import dev.tandem.config.TlsSettings;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * The test PKI of {@code src/test/resources/tls} (see its make.sh) and the sockets tests open: clear text by
 * default, TLS with the test CA after {@link #useTls} — so the raw clients (RawHttp, RawWebSocket,
 * BridgeTestClient) run unchanged against TLS listeners.
 */
public final class TestTls {
    public static final Path DIR = Path.of("src/test/resources/tls").toAbsolutePath();
    private static volatile SSLContext sockets;

    private TestTls() {}

    public static String pem(String name) {
        return DIR.resolve(name + ".pem").toString();
    }

    /** A surface's TLS with the test server certificate; {@code clientCerts}: clients need one of the test CA. */
    public static TlsSettings server(boolean clientCerts, boolean required) {
        return new TlsSettings(pem("server"), pem("server-key"), clientCerts ? pem("ca") : "", required);
    }

    /** The cluster's mutual TLS with the test node certificate ({@code rogue}: another CA's, trusting that CA). */
    public static ClusterTls cluster(boolean rogue) {
        String node = rogue ? "rogue-node" : "node";
        return new ClusterTls(pem(node), pem(node + "-key"), pem(rogue ? "rogue-ca" : "cluster-ca"));
    }

    /** A client context trusting the test CA, presenting the test client certificate when asked for one. */
    public static SSLContext clientContext(boolean withClientCert) {
        try {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", certificate("ca"));
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            KeyManagerFactory kmf = null;
            if (withClientCert) {
                KeyStore keys = KeyStore.getInstance("PKCS12");
                keys.load(null, null);
                keys.setKeyEntry(
                        "client", key("client-key", "EC"), new char[0], new Certificate[] {certificate("client")});
                kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(keys, new char[0]);
            }
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
            return ctx;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public static Certificate certificate(String name) throws IOException, GeneralSecurityException {
        try (InputStream in = Files.newInputStream(DIR.resolve(name + ".pem"))) {
            return CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    /** A PKCS#8 PEM key ({@code BEGIN PRIVATE KEY}), as make.sh writes them. */
    public static PrivateKey key(String name, String algorithm) throws IOException, GeneralSecurityException {
        String pem = Files.readString(DIR.resolve(name + ".pem"))
                .replaceAll("-----[A-Z ]+-----", "")
                .replaceAll("\\s", "");
        return KeyFactory.getInstance(algorithm)
                .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
    }

    /** From now on {@link #open} speaks TLS with {@code context}; null = clear text again. */
    public static void useTls(SSLContext context) {
        sockets = context;
    }

    /** A connected socket to a loopback port: clear text, or TLS after its handshake. */
    public static Socket open(int port) throws IOException {
        return open(port, null);
    }

    /** As {@link #open(int)}, from a given local address (127.0.0.2, ... are other loopback peers). */
    public static Socket open(int port, String localHost) throws IOException {
        Socket plain = localHost == null
                ? new Socket(InetAddress.getLoopbackAddress(), port)
                : new Socket(InetAddress.getLoopbackAddress(), port, InetAddress.getByName(localHost), 0);
        SSLContext ctx = sockets;
        if (ctx == null) {
            return plain;
        }
        // The handshake is several small writes: with Nagle's algorithm each waits for a delayed ACK (40 ms).
        plain.setTcpNoDelay(true);
        SSLSocket tls = (SSLSocket) ctx.getSocketFactory().createSocket(plain, "localhost", port, true);
        tls.startHandshake();
        return tls;
    }
}
